# The default image (localhost/sandbench/default) as a Dockerfile: Debian
# bookworm with python3. An example to read and change: the first start
# bootstraps the default with mmdebstrap in one step instead, which is faster.
# Build it with:
#   sandbench image build -t localhost/sandbench/default -f data/default.Dockerfile data
FROM debian:bookworm-slim
# sandbench: network=on
RUN apt-get update && \
    apt-get install -y --no-install-recommends python3 ca-certificates && \
    rm -rf /var/lib/apt/lists/*
ENV LANG=C.UTF-8
WORKDIR /workspace
CMD ["/bin/bash"]
