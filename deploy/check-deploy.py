#!/usr/bin/env python3
"""Static checks of the deployment files, so that they cannot rot where no Docker engine or
Kubernetes cluster runs (this project's CI).

Checks that docker-compose.yml and deploy/k8s/*.yaml parse; that every build target, stage,
binary, flag, port, service name, secret and file they name exists in the project; that the
image build installs only packages the project's own setup script knows; and that the servers
are reachable yet not open: a server that must be reached listens beyond loopback, ply-bot then
requires a token (or mutual TLS) that its lobby sends, token files are mounted secrets, and no
password or token is written in the files themselves.

    python3 deploy/check-deploy.py            # exit 1 and one line per problem
    python3 deploy/check-deploy.py --selftest # also checks that broken files are caught
    python3 deploy/check-deploy.py --schemas [--selftest]

--schemas validates the Kubernetes objects against the Kubernetes API's schemas instead, offline
(deploy/k8s-validate: npm packages that deploy/install-deps.sh installs): what `kubectl kustomize
deploy/k8s` renders where a kubectl is installed, else the files as they are with the Secrets the
secretGenerator would make.
"""
import copy
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Each image runs one program; its flags are the ABSL_FLAGs defined in its folder.
PROGRAMS = {
    "ply-bot": "bot-service",
    "ply-lobby": "lobby-server",
    "ply": "client-cli",
    "ply-web": "client-web",
}
# The port each image's program listens on (its ENTRYPOINT's --port).
LISTENS = {"ply-bot": 50051, "ply-lobby": 50050, "ply-web": 8080}


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def flags_of(folder):
    names = set()
    base = os.path.join(ROOT, folder)
    if not os.path.isdir(base):
        return names
    for dirpath, _, files in os.walk(base):
        for name in files:
            if name.endswith(".cc"):
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    names.update(re.findall(r"ABSL_FLAG\(\s*[\w:<>]+\s*,\s*(\w+)\s*,", f.read()))
    return names


def executables():
    """Executable target name -> folder, from every CMakeLists.txt."""
    found = {}
    for dirpath, dirnames, files in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "build"))]
        if "CMakeLists.txt" in files:
            text = open(os.path.join(dirpath, "CMakeLists.txt"), encoding="utf-8").read()
            for name in re.findall(r"add_executable\(\s*([\w-]+)", text):
                found[name] = os.path.relpath(dirpath, ROOT)
    return found


def check_env(program, names, where, problems):
    """Every PLY_* variable set for a program must be read somewhere in its folder."""
    base = os.path.join(ROOT, PROGRAMS[program])
    text = ""
    for dirpath, _, files in os.walk(base):
        for name in files:
            if name.endswith(".cc"):
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    text += f.read()
    for name in names:
        if name.startswith("PLY_") and f'"{name}"' not in text:
            problems.append(f"{where}: sets {name}, which {program} never reads")


def check_flags(program, args, where, problems):
    known = flags_of(PROGRAMS[program])
    for arg in args:
        m = re.match(r"--([\w]+)(=|$)", str(arg))
        if m and m.group(1) not in known:
            problems.append(f"{where}: {program} has no flag --{m.group(1)}")


LOOPBACK = re.compile(r"^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$")
SECRET_NAME = re.compile(r"PASSWORD|SECRET|TOKEN", re.I)


def listen_host(args):
    """The --host a ply server gets: its flag, else the built-in default (loopback)."""
    return flag_value(args, "host") or "127.0.0.1"


def check_bot_exposure(args, where, problems):
    """ply-bot refuses to start beyond loopback without a token or mutual TLS: so must we."""
    host = listen_host(args)
    mutual_tls = flag_value(args, "tls_cert") and flag_value(args, "tls_client_ca")
    if not LOOPBACK.match(host) and not flag_value(args, "auth_token_file") and not mutual_tls:
        problems.append(f"{where}: ply-bot listens on {host} without --auth_token_file or mutual "
                        "TLS, and would refuse to start")


def check_written_secrets(env, where, problems):
    """Passwords and tokens belong in env files or secrets, not in deployment files."""
    for key, value in env.items():
        value = str(value)
        if SECRET_NAME.search(key) and not key.endswith("_FILE"):
            problems.append(f"{where}: {key} is set in the file; use an env file or a secret")
        elif re.search(r"password\s*=|://[^/@\s]+:[^/@\s]+@", value, re.I):
            problems.append(f"{where}: {key} holds a password; use an env file or a secret")


def ignored_by_git(path):
    """Whether .gitignore lists `path` or a folder above it (as /folder/)."""
    ignore = read(".gitignore").split()
    parts = os.path.normpath(path).split(os.sep)
    return any(f"/{os.path.join(*parts[:i])}/" in ignore for i in range(1, len(parts)))


def flag_value(args, name):
    for arg in args:
        if str(arg).startswith(f"--{name}="):
            return str(arg).split("=", 1)[1]
    return None


def parse_dockerfile(text):
    """Stage name -> {'entrypoint': [...], 'expose': [ports]} and the build stage's packages."""
    stages, current = {}, None
    packages = set()
    joined = re.sub(r"\\\n", " ", text)
    for line in joined.splitlines():
        line = line.strip()
        m = re.match(r"FROM\s+\S+\s+AS\s+(\w+)", line, re.I)
        if m:
            current = m.group(1)
            stages[current] = {"entrypoint": [], "expose": [], "apt": set()}
            continue
        if current is None:
            continue
        if line.startswith("ENTRYPOINT"):
            stages[current]["entrypoint"] = yaml.safe_load(line[len("ENTRYPOINT"):].strip())
        elif line.startswith("EXPOSE"):
            stages[current]["expose"] += [int(p) for p in line.split()[1:]]
        elif "apt-get install" in line:
            words = line.split("apt-get install", 1)[1].split("&&")[0].split()
            stages[current]["apt"].update(w for w in words if not w.startswith("-"))
    return stages


def check_dockerfile(text, problems):
    stages = parse_dockerfile(text)
    exes = executables()
    m = re.search(r"cmake --build \S+ --target ([\w\- ]+?)(?:\\|&&|$)", re.sub(r"\\\n", " ", text))
    if not m:
        problems.append("deploy/Dockerfile: no `cmake --build ... --target` line")
    else:
        for target in m.group(1).split():
            if target not in exes:
                problems.append(f"deploy/Dockerfile: builds {target}, which no CMakeLists defines")
    for folder, name in re.findall(r"/build/([\w\-/]+)/([\w\-]+)\b", text):
        if exes.get(name) != folder:
            problems.append(f"deploy/Dockerfile: copies /build/{folder}/{name}, but {name} is "
                            f"built in {exes.get(name, 'no folder')}")
    # The build stage copies source folders one by one (so that other edits keep its cache):
    # every folder the top CMakeLists.txt adds must be among them.
    copied = set()
    for line in re.sub(r"\\\n", " ", text).splitlines():
        m = re.match(r"\s*COPY\s+(?!--from)(.+)\s+\S+\s*$", line)
        if m:
            copied.update(os.path.normpath(src).split(os.sep)[0] for src in m.group(1).split())
    if "." not in copied:
        added = re.findall(r"add_subdirectory\(\s*([\w\-/]+)", read("CMakeLists.txt"))
        needed = {"CMakeLists.txt"} | {d.split("/")[0] for d in added}
        for folder in sorted(needed - copied):
            problems.append(f"deploy/Dockerfile: the build stage does not copy {folder}, which "
                            "CMakeLists.txt needs")
    deps = read("deploy/install-deps.sh")
    build_packages = stages.get("build", {}).get("apt", set())
    for package in sorted(build_packages):
        if not re.search(rf"(^|\s){re.escape(package)}(\s|$)", deps, re.M):
            problems.append(f"deploy/Dockerfile: build stage installs {package}, which "
                            "deploy/install-deps.sh does not")
    for stage, info in stages.items():
        entry = info["entrypoint"]
        if not entry:
            continue
        program = entry[0]
        if program in PROGRAMS:
            check_flags(program, entry[1:], f"deploy/Dockerfile stage {stage}", problems)
            port = flag_value(entry[1:], "port")
            if port and int(port) not in info["expose"]:
                problems.append(f"deploy/Dockerfile stage {stage}: listens on {port} but "
                                f"exposes {info['expose']}")
    return stages


def mounted_secret(container, pod_spec, path):
    """The Secret whose volume the container mounts at `path`'s folder, or None."""
    folder = os.path.split(path)[0]
    mounts = {m["mountPath"].rstrip("/"): m["name"] for m in container.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
    return volumes.get(mounts.get(folder), {}).get("secret", {}).get("secretName")


def proxy_secret(container, pod_spec):
    """What a container's --proxy_token_file reads: SECRET/KEY, the path when no Secret is
    mounted there, None without the flag."""
    path = flag_value(container.get("args", []), "proxy_token_file")
    if path is None:
        return None
    secret = mounted_secret(container, pod_spec, path)
    return f"{secret}/{os.path.basename(path)}" if secret else path


def check_proxy_trust(where, web_token, lobby, lobby_token, problems):
    """ply-web forwards each browser's address; the lobby believes it only from a proxy it
    trusts, else every browser is one client and shares one set of quotas."""
    if not web_token:
        problems.append(f"{where}: no --proxy_token_file: the lobby would count every browser "
                        "as this one client (one person could use up everyone's quotas)")
    elif lobby_token != web_token:
        problems.append(f"{where}: sends the proxy token in {web_token}, but {lobby} trusts "
                        f"{lobby_token or 'none'} (--proxy_token_file)")


def check_compose(compose, stages, problems):
    services = compose.get("services", {})
    for name, svc in services.items():
        where = f"docker-compose.yml service {name}"
        build = svc.get("build")
        program = None
        if build:
            dockerfile = build.get("dockerfile", "Dockerfile")
            if not os.path.exists(os.path.join(ROOT, build.get("context", "."), dockerfile)):
                problems.append(f"{where}: no {dockerfile}")
            target = build.get("target")
            if target not in stages:
                problems.append(f"{where}: the Dockerfile has no stage {target}")
                continue
            entry = stages[target]["entrypoint"]
            program = entry[0] if entry else None
            args = entry[1:] + list(svc.get("command", []))
            if program in PROGRAMS:
                check_flags(program, svc.get("command", []), where, problems)
                check_env(program, list(svc.get("environment", {}) or {}), where, problems)
            if program == "ply-bot":
                check_bot_exposure(args, where, problems)
            # Other containers reach a server only when it listens beyond loopback.
            reached = svc.get("ports") or any(
                re.search(rf"--bot_target=dns:///{re.escape(name)}:", str(a))
                for other in services.values() for a in other.get("command", []))
            if program in ("ply-bot", "ply-lobby") and reached and LOOPBACK.match(listen_host(args)):
                problems.append(f"{where}: listens on {listen_host(args)} inside its container, "
                                "where nothing else reaches it; give --host=0.0.0.0")
            for flag in ("auth_token_file", "bot_token_file", "proxy_token_file"):
                path = flag_value(args, flag)
                if path is None:
                    continue
                m = re.match(r"/run/secrets/([\w\-.]+)$", path)
                if not m or m.group(1) not in (svc.get("secrets") or []):
                    problems.append(f"{where}: --{flag}={path} is not one of its secrets "
                                    "(/run/secrets/NAME)")
                elif m.group(1) not in (compose.get("secrets") or {}):
                    problems.append(f"{where}: secret {m.group(1)} is not defined")
            # A dns:/// target must name a Compose service, on the port that service listens on.
            for arg in args:
                m = re.match(r"--(bot_target|lobby)=dns:///([\w\-]+):(\d+)", str(arg))
                if m:
                    flag, target, target_port = m.groups()
                    other = services.get(target)
                    if other is None:
                        problems.append(f"{where}: --{flag} names no service {target}")
                        continue
                    other_entry = stages.get(other.get("build", {}).get("target"), {}).get(
                        "entrypoint", [])
                    port = flag_value(other_entry[1:] + list(other.get("command", [])), "port")
                    if port != target_port:
                        problems.append(f"{where}: --{flag} port {target_port} but "
                                        f"{target} listens on {port}")
                    if not flag_value(list(other.get("command", [])), "max_connection_age_ms"):
                        problems.append(f"{target}: {flag} instances need "
                                        "--max_connection_age_ms so that clients re-resolve "
                                        "and see new instances")
                    token = flag_value(other_entry[1:] + list(other.get("command", [])),
                                       "auth_token_file")
                    if token and flag_value(args, "bot_token_file") != token:
                        problems.append(f"{where}: {target} requires the token in {token}; "
                                        f"give the lobby --bot_token_file={token}")
                    if flag == "lobby":
                        check_proxy_trust(where, flag_value(args, "proxy_token_file"), target,
                                          flag_value(list(other.get("command", [])),
                                                     "proxy_token_file"), problems)
            if "container_name" in svc and name in ("bot", "lobby", "web"):
                problems.append(f"{where}: container_name prevents --scale")
            if name in ("lobby", "web"):
                for port in svc.get("ports", []):
                    host_port = str(port).rsplit(":", 1)[0].split(":")[-1] if ":" in str(
                        port) else ""
                    if "-" in host_port:
                        problems.append(f"{where}: host port range {port}: Podman refuses a "
                                        "range for one container port; leave the host port "
                                        "empty (127.0.0.1::50050)")
                    elif host_port:
                        problems.append(f"{where}: host port {port} is one port: --scale {name}=N "
                                        "needs a port per instance (127.0.0.1::50050)")
        health = svc.get("healthcheck", {}).get("test", [])
        port = None
        if isinstance(health, list) and "ply-healthcheck" in health:
            port = health[-1].rsplit(":", 1)[-1]
        elif isinstance(health, list) and "ply-web" in health:
            port = flag_value(health, "port")
            if "--healthcheck" not in health:
                problems.append(f"{where}: the health check starts a second ply-web instead of "
                                "asking with --healthcheck")
        if port is not None:
            entry = stages.get((build or {}).get("target"), {}).get("entrypoint", [])
            listens = flag_value(entry[1:] + list(svc.get("command", [])), "port")
            if listens and port != listens:
                problems.append(f"{where}: health check on port {port}, but it listens on "
                                f"{listens}")
        check_written_secrets(svc.get("environment", {}) or {}, where, problems)
        env_files = svc.get("env_file", [])
        for path in [env_files] if isinstance(env_files, str) else env_files:
            if not ignored_by_git(path):
                problems.append(f"{where}: env file {path} is not in a folder git ignores")
        for dep in svc.get("depends_on", {}):
            if dep not in services:
                problems.append(f"{where}: depends on unknown service {dep}")
    if "bot" not in services:
        problems.append("docker-compose.yml: no `bot` service to scale")
    if "web" not in services:
        problems.append("docker-compose.yml: no `web` service (ply-web, the browser's way in)")
    for name, secret in (compose.get("secrets") or {}).items():
        if "file" in secret and not ignored_by_git(secret["file"]):
            problems.append(f"docker-compose.yml secret {name}: {secret['file']} is not in a "
                            "folder git ignores")


def check_k8s(docs, problems):
    by_kind = {}
    for doc in docs:
        by_kind.setdefault(doc["kind"], {})[doc["metadata"]["name"]] = doc
    services = by_kind.get("Service", {})
    secrets = by_kind.get("Secret", {})
    for kind in ("Deployment", "StatefulSet"):
        for name, d in by_kind.get(kind, {}).items():
            spec = d["spec"]
            labels = spec["template"]["metadata"]["labels"]
            if spec["selector"]["matchLabels"] != labels:
                problems.append(f"k8s {kind} {name}: selector does not match the pod labels")
            for c in spec["template"]["spec"]["containers"]:
                where = f"k8s {kind} {name} container {c['name']}"
                image = c["image"].split(":")[0]
                ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
                args = c.get("args", [])
                if image == "ply-bot":
                    check_bot_exposure(args, where, problems)
                for flag in ("auth_token_file", "bot_token_file", "proxy_token_file"):
                    path = flag_value(args, flag)
                    if path is None:
                        continue
                    key = os.path.basename(path)
                    secret = mounted_secret(c, spec["template"]["spec"], path)
                    if secret is None:
                        problems.append(f"{where}: --{flag}={path} is not in a mounted Secret")
                    elif secret not in secrets or key not in secrets[secret].get("stringData", {}):
                        problems.append(f"{where}: --{flag} reads key {key} of Secret {secret}, "
                                        "which is not defined")
                check_written_secrets({e["name"]: e["value"] for e in c.get("env", [])
                                       if "value" in e}, where, problems)
                if image in PROGRAMS:
                    check_flags(image, args, where, problems)
                    check_env(image, [e["name"] for e in c.get("env", [])], where, problems)
                    entry_port = LISTENS.get(image)
                    if entry_port and entry_port not in ports.values():
                        problems.append(f"{where}: the image listens on {entry_port}, not among "
                                        f"the container ports {sorted(ports.values())}")
                    metrics = flag_value(args, "metrics_port")
                    if metrics and int(metrics) not in ports.values():
                        problems.append(f"{where}: --metrics_port {metrics} is not a container "
                                        "port")
                    workers = flag_value(args, "workers")
                    cpu = c.get("resources", {}).get("requests", {}).get("cpu")
                    if workers and cpu and str(workers) != str(cpu):
                        problems.append(f"{where}: {workers} workers for {cpu} requested CPUs")
                for probe in ("readinessProbe", "livenessProbe"):
                    p = c.get(probe, {})
                    port = p.get("grpc", p.get("httpGet", {})).get("port")
                    if port is not None and port not in ports.values() and port not in ports:
                        problems.append(f"{where}: {probe} on port {port}, not a container port")
                    if "httpGet" in p and p["httpGet"].get("path") != "/healthz" and \
                            image == "ply-web":
                        problems.append(f"{where}: {probe} asks {p['httpGet'].get('path')}, "
                                        "not /healthz")
                for env in c.get("env", []):
                    ref = env.get("valueFrom", {}).get("secretKeyRef")
                    if ref and (ref["name"] not in secrets or
                                ref["key"] not in secrets[ref["name"]].get("stringData", {})):
                        problems.append(f"{where}: secret {ref['name']}/{ref['key']} is not "
                                        "defined")
                for arg in args:
                    m = re.match(r"--lobby=dns:///([\w\-]+):(\d+)", str(arg))
                    if m and (m.group(1) not in services or int(m.group(2)) not in
                              [p["port"] for p in services[m.group(1)]["spec"]["ports"]]):
                        problems.append(f"{where}: --lobby names no Service port "
                                        f"{m.group(1)}:{m.group(2)}")
                    elif m:
                        # The lobbies behind that Service must trust the Secret ply-web sends.
                        selector = services[m.group(1)]["spec"]["selector"]
                        for d in by_kind.get("Deployment", {}).values():
                            labels = d["spec"]["template"]["metadata"]["labels"]
                            if not all(labels.get(a) == b for a, b in selector.items()):
                                continue
                            pod = d["spec"]["template"]["spec"]
                            for lc in pod["containers"]:
                                check_proxy_trust(where, proxy_secret(c, spec["template"]["spec"]),
                                                  f"Service {m.group(1)}",
                                                  proxy_secret(lc, pod), problems)
                    m = re.match(r"--bot_target=dns:///([\w\-]+):(\d+)", str(arg))
                    if m:
                        svc = services.get(m.group(1))
                        if svc is None:
                            problems.append(f"{where}: --bot_target names no Service "
                                            f"{m.group(1)}")
                        else:
                            if svc["spec"].get("clusterIP") != "None":
                                problems.append(f"k8s Service {m.group(1)}: must be headless "
                                                "for per-pod round robin")
                            if int(m.group(2)) not in [p["port"] for p in svc["spec"]["ports"]]:
                                problems.append(f"{where}: --bot_target port {m.group(2)} is "
                                                f"not a port of Service {m.group(1)}")
                            for d in by_kind.get("Deployment", {}).values():
                                labels = d["spec"]["template"]["metadata"]["labels"]
                                if not all(labels.get(a) == b
                                           for a, b in svc["spec"]["selector"].items()):
                                    continue
                                for bc in d["spec"]["template"]["spec"]["containers"]:
                                    if (flag_value(bc.get("args", []), "auth_token_file") and
                                            not flag_value(args, "bot_token_file")):
                                        problems.append(f"{where}: the bots of Service "
                                                        f"{m.group(1)} require a token; give "
                                                        "the lobby --bot_token_file")
    for name, svc in services.items():
        selector = svc["spec"]["selector"]
        targets = [d for k in ("Deployment", "StatefulSet") for d in by_kind.get(k, {}).values()
                   if all(d["spec"]["template"]["metadata"]["labels"].get(a) == b
                          for a, b in selector.items())]
        if not targets:
            problems.append(f"k8s Service {name}: selects no pods")
            continue
        names = {p.get("name") for d in targets
                 for c in d["spec"]["template"]["spec"]["containers"] for p in c.get("ports", [])}
        for p in svc["spec"]["ports"]:
            if isinstance(p.get("targetPort"), str) and p["targetPort"] not in names:
                problems.append(f"k8s Service {name}: targetPort {p['targetPort']} is not a "
                                "named container port")
    # The lobby runs as several instances that drain before they stop.
    lobby = by_kind.get("Deployment", {}).get("ply-lobby")
    if lobby is not None:
        if lobby["spec"].get("replicas", 1) < 2:
            problems.append("k8s Deployment ply-lobby: one replica is a single point of failure")
        if lobby["spec"].get("strategy", {}).get("type") == "Recreate":
            problems.append("k8s Deployment ply-lobby: Recreate stops every instance at once")
        for c in lobby["spec"]["template"]["spec"]["containers"]:
            if "preStop" not in c.get("lifecycle", {}):
                problems.append("k8s Deployment ply-lobby: no preStop before the drain")
        pdbs = [p for p in by_kind.get("PodDisruptionBudget", {}).values()
                if p["spec"]["selector"]["matchLabels"].items() <=
                lobby["spec"]["template"]["metadata"]["labels"].items()]
        if not pdbs:
            problems.append("k8s Deployment ply-lobby: no PodDisruptionBudget")
        if not any(h["spec"]["scaleTargetRef"]["name"] == "ply-lobby"
                   for h in by_kind.get("HorizontalPodAutoscaler", {}).values()):
            problems.append("k8s Deployment ply-lobby: no HorizontalPodAutoscaler")
    if "ply-web" not in by_kind.get("Deployment", {}) or "ply-web" not in services:
        problems.append("k8s: no ply-web Deployment and Service (the browser's way in)")
    for name, secret in secrets.items():
        if not secret.get("generated") and (secret.get("stringData") or secret.get("data")):
            problems.append(f"k8s Secret {name}: its values are written in the file; generate it "
                            "from ignored files (kustomization.yaml secretGenerator)")
    for name in by_kind.get("Problem", {}):
        problems.append(f"deploy/k8s/kustomization.yaml: {name}")
    for kind in ("HorizontalPodAutoscaler",):
        for name, h in by_kind.get(kind, {}).items():
            ref = h["spec"]["scaleTargetRef"]
            if ref["name"] not in by_kind.get(ref["kind"], {}):
                problems.append(f"k8s {kind} {name}: scales unknown {ref['kind']} {ref['name']}")


def load_all():
    compose = yaml.safe_load(read("docker-compose.yml"))
    docs = []
    kustomization = yaml.safe_load(read("deploy/k8s/kustomization.yaml"))
    for resource in kustomization["resources"]:
        docs += [d for d in yaml.safe_load_all(read(os.path.join("deploy/k8s", resource))) if d]
    # Secrets kustomize generates from files (deploy/make-secrets writes them; git ignores them):
    # their names and keys, without their content.
    for gen in kustomization.get("secretGenerator", []):
        keys = {}
        for entry in gen.get("files", []):
            key, _, path = entry.partition("=")
            if not path:
                key, path = os.path.basename(entry), entry
            if not ignored_by_git(os.path.join("deploy/k8s", path)):
                docs.append({"kind": "Problem", "metadata": {"name": f"secretGenerator "
                             f"{gen['name']}: {path} is not in a folder git ignores"}})
            keys[key] = ""
        for entry in gen.get("literals", []):
            docs.append({"kind": "Problem", "metadata": {"name": f"secretGenerator "
                         f"{gen['name']}: a literal value is written in kustomization.yaml"}})
        docs.append({"kind": "Secret", "metadata": {"name": gen["name"]}, "stringData": keys,
                     "generated": True})
    return read("deploy/Dockerfile"), compose, docs


def run(dockerfile, compose, docs):
    problems = []
    stages = check_dockerfile(dockerfile, problems)
    check_compose(compose, stages, problems)
    check_k8s(docs, problems)
    return problems


def selftest(dockerfile, compose, docs):
    """Each mutation must be reported: the checks above can fail."""
    failures = []

    def expect(label, d, c, k):
        if not run(d, c, k):
            failures.append(f"selftest: a broken file passed: {label}")

    c = copy.deepcopy(compose)
    c["services"]["lobby"]["command"] = ["--bot_targett=dns:///bot:50051"]
    expect("unknown lobby flag in Compose", dockerfile, c, docs)
    c = copy.deepcopy(compose)
    c["services"]["lobby"]["command"] = ["--bot_target=dns:///bots:50051"]
    expect("bot target naming no service", dockerfile, c, docs)
    expect("unknown build target", dockerfile.replace("--target ply-bot", "--target ply-bott"),
           compose, docs)
    expect("a source folder the build stage does not copy",
           dockerfile.replace("COPY proto proto\n", ""), compose, docs)
    c = copy.deepcopy(compose)
    c["services"]["lobby"]["environment"] = {"PLY_DATABASE_URI": "x"}
    expect("an environment variable the lobby does not read", dockerfile, c, docs)
    k = copy.deepcopy(docs)
    for d in k:
        if d["kind"] == "Deployment" and d["metadata"]["name"] == "ply-bot":
            d["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["grpc"]["port"] = 1
    expect("probe on an undeclared port", dockerfile, compose, k)
    c = copy.deepcopy(compose)
    c["services"]["lobby"]["ports"] = ["127.0.0.1:50050:50050"]
    expect("a single host port for a scaled lobby", dockerfile, c, docs)
    c = copy.deepcopy(compose)
    c["services"]["lobby"]["ports"] = ["127.0.0.1:50050-50059:50050"]
    expect("a host port range that Podman refuses", dockerfile, c, docs)

    def compose_without(service, flag):
        c = copy.deepcopy(compose)
        c["services"][service]["command"] = [a for a in c["services"][service]["command"]
                                             if not a.startswith(f"--{flag}")]
        return c

    def k8s_without(deployment, flag):
        k = copy.deepcopy(docs)
        for d in k:
            if d["kind"] == "Deployment" and d["metadata"]["name"] == deployment:
                args = d["spec"]["template"]["spec"]["containers"][0]["args"]
                args[:] = [a for a in args if not a.startswith(f"--{flag}")]
        return k

    def lobby_mutation(label, change):
        k = copy.deepcopy(docs)
        for d in k:
            if d["metadata"]["name"] == "ply-lobby" or d["kind"] == "PodDisruptionBudget":
                change(d)
        expect(label, dockerfile, compose, k)

    c = copy.deepcopy(compose)
    c["services"]["web"]["command"] = ["--lobby=dns:///lobbies:50050"]
    expect("ply-web's lobby naming no service", dockerfile, c, docs)
    c = copy.deepcopy(compose)
    c["services"]["web"]["command"] = ["--lobbyy=dns:///lobby:50050"]
    expect("unknown ply-web flag in Compose", dockerfile, c, docs)
    c = copy.deepcopy(compose)
    c["services"]["web"]["healthcheck"]["test"] = ["CMD", "ply-web", "--healthcheck", "--port=80"]
    expect("ply-web health check on another port", dockerfile, c, docs)
    c = copy.deepcopy(compose)
    del c["services"]["web"]
    expect("no web service in Compose", dockerfile, c, docs)
    k = copy.deepcopy(docs)
    for d in k:
        if d["kind"] == "Deployment" and d["metadata"]["name"] == "ply-web":
            d["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["port"] = 9
    expect("ply-web probe on an undeclared port", dockerfile, compose, k)
    k = copy.deepcopy(docs)
    for d in k:
        if d["kind"] == "Deployment" and d["metadata"]["name"] == "ply-web":
            d["spec"]["template"]["spec"]["containers"][0]["args"] = ["--lobby=dns:///lobby:50050"]
    expect("ply-web's lobby naming no Kubernetes Service", dockerfile, compose, k)

    lobby_mutation("one lobby replica", lambda d: d["kind"] == "Deployment" and
                   d["spec"].update(replicas=1))
    lobby_mutation("a lobby without preStop", lambda d: d["kind"] == "Deployment" and
                   d["spec"]["template"]["spec"]["containers"][0].pop("lifecycle"))
    lobby_mutation("no PodDisruptionBudget for the lobby",
                   lambda d: d["kind"] == "PodDisruptionBudget" and
                   d["spec"]["selector"]["matchLabels"].update(app="nobody"))
    expect("a bot beyond loopback without a token", dockerfile,
           compose_without("bot", "auth_token_file"), docs)
    expect("a bot on loopback in its container", dockerfile, compose_without("bot", "host"), docs)
    expect("a lobby without the token its bots require", dockerfile,
           compose_without("lobby", "bot_token_file"), docs)
    expect("a lobby that does not trust ply-web's proxy token", dockerfile,
           compose_without("lobby", "proxy_token_file"), docs)
    expect("a ply-web that sends no proxy token", dockerfile,
           compose_without("web", "proxy_token_file"), docs)
    c = copy.deepcopy(compose)
    c["services"]["lobby"]["environment"]["PLY_DATABASE_URL"] += " password=ply"
    expect("a database password in docker-compose.yml", dockerfile, c, docs)
    c = copy.deepcopy(compose)
    c["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"] = "ply"
    expect("POSTGRES_PASSWORD in docker-compose.yml", dockerfile, c, docs)
    c = copy.deepcopy(compose)
    c["services"]["bot"]["secrets"] = []
    expect("a token file that is not a mounted secret", dockerfile, c, docs)
    expect("a Kubernetes lobby without the bots' token", dockerfile, compose,
           k8s_without("ply-lobby", "bot_token_file"))
    expect("a Kubernetes lobby that does not trust ply-web's proxy token", dockerfile, compose,
           k8s_without("ply-lobby", "proxy_token_file"))
    k = copy.deepcopy(docs)
    for d in k:
        if d["kind"] == "Deployment" and d["metadata"]["name"] == "ply-bot":
            d["spec"]["template"]["spec"]["volumes"][0]["secret"]["secretName"] = "nothing"
    expect("a token from an undefined Secret", dockerfile, compose, k)
    k = copy.deepcopy(docs) + [{"kind": "Secret", "metadata": {"name": "written"},
                                 "stringData": {"password": "change-me"}}]
    expect("a Kubernetes Secret with its value in the file", dockerfile, compose, k)
    return failures


VALIDATOR = os.path.join(ROOT, "deploy", "k8s-validate")
HA_POSTGRES = "deploy/k8s/postgres-ha.yaml"


def render_k8s():
    """The objects `kubectl apply -k deploy/k8s` would send, as YAML, and how they were made.

    The secret files are the operator's and may not exist here: a copy of the folder gets
    placeholders, since their values do not matter to the schemas."""
    kustomization = yaml.safe_load(read("deploy/k8s/kustomization.yaml"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "k8s")
        shutil.copytree(os.path.join(ROOT, "deploy", "k8s"), folder,
                        ignore=shutil.ignore_patterns("secrets"))
        for gen in kustomization.get("secretGenerator", []):
            for entry in gen.get("files", []):
                path = os.path.join(folder, entry.partition("=")[2] or entry)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write("placeholder")
        kubectl = shutil.which("kubectl")
        if kubectl:
            try:
                out = subprocess.run([kubectl, "kustomize", folder], capture_output=True,
                                     text=True, timeout=120)
                if out.returncode == 0:
                    return out.stdout, "kubectl kustomize"
            except subprocess.TimeoutExpired:
                pass
    text = ""
    for resource in kustomization["resources"]:
        text += read(os.path.join("deploy/k8s", resource)) + "\n---\n"
    for gen in kustomization.get("secretGenerator", []):
        keys = [(e.partition("=")[0] if "=" in e else os.path.basename(e)) for e in gen["files"]]
        text += yaml.safe_dump({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                                "metadata": {"name": gen["name"]},
                                "data": {k: "cGxhY2Vob2xkZXI=" for k in keys}}) + "\n---\n"
    return text, "the files (no kubectl to render them)"


def validate_schemas(text):
    """Problems node's validator finds in `text` (YAML), one per line; [] when it passes."""
    out = subprocess.run(["node", os.path.join(VALIDATOR, "validate.mjs")], input=text,
                         capture_output=True, text=True, timeout=120)
    if out.returncode == 0:
        return []
    return [line for line in (out.stdout + out.stderr).splitlines() if line.strip()] or [
        f"validate.mjs exited {out.returncode}"]


def check_schemas(selftest):
    if not os.path.isdir(os.path.join(VALIDATOR, "node_modules", "@kubernetes-models",
                                      "cloudnative-pg")):
        print("deploy/k8s-validate: schemas not installed (deploy/install-deps.sh installs them)")
        return 1
    text, how = render_k8s()
    # The highly available PostgreSQL (CloudNativePG), which an operator puts in place of
    # postgres.yaml, against the operator's CRD schemas.
    text += "\n---\n" + read(HA_POSTGRES)
    problems = validate_schemas(text)
    if selftest:
        docs = [d for d in yaml.safe_load_all(text) if d]
        for label, change in [
                ("a misspelt field", lambda d: d["kind"] == "Deployment" and
                 d["spec"].update(replica=3)),
                ("a port given as text", lambda d: d["kind"] == "Service" and
                 d["spec"]["ports"][0].update(port="grpc")),
                ("a probe of an unknown kind", lambda d: d["kind"] == "Deployment" and
                 d["spec"]["template"]["spec"]["containers"][0]["readinessProbe"].update(
                     grpcc={"port": 1})),
                ("an operator's resource with a misspelt field",
                 lambda d: d["kind"] == "Cluster" and d["spec"].update(instance=3)),
                ("a synchronous replication method the operator does not know",
                 lambda d: d["kind"] == "Cluster" and
                 d["spec"]["postgresql"]["synchronous"].update(method="sometimes"))]:
            broken = copy.deepcopy(docs)
            for d in broken:
                change(d)
            if not validate_schemas(yaml.safe_dump_all(broken)):
                problems.append(f"selftest: a broken manifest passed the schemas: {label}")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"kubernetes schemas: ok ({how})")
    return 0


def main():
    if "--schemas" in sys.argv:
        return check_schemas("--selftest" in sys.argv)
    dockerfile, compose, docs = load_all()
    problems = run(dockerfile, compose, docs)
    if "--selftest" in sys.argv:
        problems += selftest(dockerfile, compose, docs)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"deploy files: ok (Dockerfile, docker-compose.yml, {len(docs)} Kubernetes objects)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
