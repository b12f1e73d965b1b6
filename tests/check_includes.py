#!/usr/bin/env python3
"""The include graph's rules: which folder may include which.

The arrows run one way: engine <- common <- bot-service (its client) <- lobby-server;
common <- lobby-client <- client-cli, client-web. Inside the engine, games, the search and the
registry never reach into the tools. Each rule names a folder, the include prefixes it may not
use, and the exceptions. A quoted include ("x/y.h") is checked; system includes (<...>) are not.

  check_includes.py [ROOT]        check the tree at ROOT (default: this checkout); exit 1 on a
                                  broken rule, naming the file, the line and the rule
  check_includes.py --selftest    check the tree, then show that a planted include in a scratch
                                  tree is caught (so that the check cannot pass by finding nothing)
"""

import os
import re
import shutil
import sys
import tempfile

SERVERS_AND_CLIENTS = ["lobby-server", "lobby-client", "client-cli", "client-web"]

# (folder, forbidden include prefixes, allowed prefixes among them, why)
RULES = [
    ("engine", ["common/", "bot-service/", "lobby-server/", "lobby-client/", "client-cli/",
                "client-web/", "ply/v1/"], [],
     "the engine knows no wire, server or client"),
    ("engine/games", ["engine/tool/", "engine/analysis/", "engine/registry/"], [],
     "a game never includes the tools, analysis or the registry: they read the game"),
    ("engine/search", ["engine/tool/"], [], "the search never includes the tools"),
    ("engine/core", ["engine/tool/", "engine/games/", "engine/registry/"], [],
     "the core knows no game"),
    ("engine/registry", ["engine/tool/"], [], "the registry never includes the tools"),
    ("engine/analysis", ["engine/tool/"], [], "analysis never includes the tools"),
    ("common", ["bot-service/", "lobby-server/", "lobby-client/", "client-cli/", "client-web/"],
     [], "common code serves every server and client and depends on none of them"),
    ("bot-service", ["lobby-server/", "lobby-client/", "client-cli/", "client-web/"], [],
     "the bot service knows nothing above it"),
    ("lobby-client", ["bot-service/", "lobby-server/", "client-cli/", "client-web/"], [],
     "the client library serves both clients and depends on neither"),
    ("client-web", ["client-cli/", "lobby-server/"], [],
     "ply-web uses the lobby client library, not the terminal client"),
    ("client-cli", ["client-web/", "lobby-server/"], [], "the terminal client is a client"),
] + [(folder, ["bot-service/"], ["bot-service/bot_client.h"],
      "only the bot service's client library is for others")
     for folder in SERVERS_AND_CLIENTS] + [
    ("lobby-server/storage", ["lobby-server/"], ["lobby-server/storage/", "lobby-server/rating/"],
     "storage is below the lobby's rules: it includes only storage and the rating rules it runs "
     "inside the transaction that ends a match"),
    ("lobby-server/rating", ["lobby-server/"], ["lobby-server/rating/", "lobby-server/storage/store.h"],
     "the rating rules are pure: they read the match records and nothing else"),
    ("lobby-server/analysis", ["lobby-server/lobby_service.h", "lobby-server/players/"], [],
     "analysis is below the service: the service starts its stream, not the other way round"),
    ("lobby-server/events", ["lobby-server/lobby_service.h", "lobby-server/analysis/",
                             "lobby-server/players/"], [],
     "the event plumbing knows no service, analysis or players' rules"),
    ("lobby-server/players", ["lobby-server/storage/postgres/", "lobby-server/storage/memory/"],
     [], "the players' rules see their stores through interfaces only"),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def sources(root, folder):
    base = os.path.join(root, folder)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d not in ("node_modules", "build")]
        for name in filenames:
            if name.endswith((".h", ".cc", ".cpp")):
                yield os.path.join(dirpath, name)


def check(root):
    problems = []
    seen = set()
    for folder, forbidden, allowed, why in RULES:
        for path in sources(root, folder):
            seen.add(path)
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    if any(target.startswith(a) for a in allowed):
                        continue
                    for prefix in forbidden:
                        if target.startswith(prefix):
                            rel = os.path.relpath(path, root)
                            problems.append(f"{rel}:{number}: includes {target}: {why}")
    return len(seen), problems


def main(argv):
    selftest = "--selftest" in argv
    args = [a for a in argv if not a.startswith("--")]
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    seen, problems = check(root)
    for p in problems:
        print(p)
    if seen < 50:
        print(f"only {seen} source files under the checked folders of {root}: wrong root?")
        return 1
    if problems:
        print(f"{len(problems)} include(s) break the layering (tests/check_includes.py)")
        return 1
    print(f"include graph: {seen} files checked against {len(RULES)} rules, all kept")
    if selftest:
        scratch = tempfile.mkdtemp()
        try:
            planted = [("client-web/x.cc", '#include "client-cli/screen.h"\n'),
                       ("engine/games/g/g.cc", '#include "engine/tool/match.h"\n'),
                       ("lobby-server/y.cc", '#include "bot-service/bot_service.h"\n'),
                       ("lobby-server/z.cc", '#include "bot-service/bot_client.h"\n')]
            for rel, text in planted:
                os.makedirs(os.path.join(scratch, os.path.dirname(rel)), exist_ok=True)
                with open(os.path.join(scratch, rel), "w") as f:
                    f.write(text)
            _, caught = check(scratch)
            expected = 3  # the bot client include is allowed
            if len(caught) != expected:
                print(f"selftest: {len(caught)} of {expected} planted includes caught: {caught}")
                return 1
            print(f"selftest: {expected} planted includes caught, the allowed one passed")
        finally:
            shutil.rmtree(scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
