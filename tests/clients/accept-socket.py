#!/usr/bin/python3
# What systemd does for data/sandbench-mcp.socket (Accept=yes), for a test
# without systemd: listens on a unix socket of mode 0660 and the given group,
# and runs the command with each connection as its stdin and stdout.
#   accept-socket.py PATH GROUP CMD...   (prints "listening" when it does)
import grp, os, signal, socket, sys

path, group, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the servers are not waited for
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
old = os.umask(0o177)
s.bind(path)
os.umask(old)
os.chown(path, 0, grp.getgrnam(group).gr_gid)
os.chmod(path, 0o660)
s.listen(16)
print("listening", flush=True)
while True:
    conn, _ = s.accept()
    if os.fork() == 0:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.dup2(conn.fileno(), 0)
        os.dup2(conn.fileno(), 1)
        os.execv(cmd[0], cmd)
    conn.close()
