# The default image, localhost/sandbench/default: the bootstrap base
# (localhost/sandbench/base: Debian bookworm with python3 made with
# mmdebstrap, or busybox when no Debian mirror answers) and what this recipe
# adds. The workbench's first start and `sandbench image bootstrap` build it;
# change it and rebuild with
#   sandbench image bootstrap -f THIS-FILE
# A package more is a RUN with the network on, for example:
#   # sandbench: network=on
#   RUN apt-get update && apt-get install -y --no-install-recommends git
FROM localhost/sandbench/base
LABEL org.opencontainers.image.title="sandbench default"
ENV LANG=C.UTF-8
WORKDIR /workspace
CMD ["/bin/sh"]
