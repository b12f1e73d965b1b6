# PostgreSQL 15 from Debian's package, for deploy/container-test only: the official postgres:15
# image that docker-compose.yml names comes from a registry these machines cannot reach. It
# reads the same variables as that image (POSTGRES_DB, POSTGRES_USER, POSTGRES_PASSWORD) and
# keeps its data in the same place, so the Compose file is used as operators run it.
FROM debian:12
# No cluster at install time: the entrypoint makes the one the variables describe.
RUN mkdir -p /etc/postgresql-common \
    && echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf \
    && apt-get update && apt-get install -y --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/*
COPY postgres-entrypoint.sh /usr/local/bin/
ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PGDATA=/var/lib/postgresql/data
EXPOSE 5432
ENTRYPOINT ["postgres-entrypoint.sh"]
