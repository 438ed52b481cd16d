"""sandbench for Python agent code: a plain client of the sandbench CLI and a
shell object for Agent Zero's code execution tool.

Standard library only. Every call runs the `sandbench` command (as root, like
sandbench itself); errors raise SandbenchError with the CLI's own message.

    box = Sandbench()                      # or Sandbench(root="/var/tmp/x")
    box.create("job1", image="busybox:test")
    box.exec("job1", "echo hi")            # {"exit_code": 0, "stdout": "hi\\n", ...}

    shell = SandbenchInteractiveSession("job1", session="a0-0")
    await shell.connect()
    await shell.send_command("cd /tmp && ls")
    full, partial = await shell.read_output(timeout=1)
"""

import asyncio
import io
import json
import os
import re
import subprocess
import tarfile

__all__ = ["SandbenchError", "Sandbench", "SandbenchInteractiveSession", "clean_output"]


class SandbenchError(Exception):
    """A sandbench command failed; `status` is its exit status (see sandbench(1))."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


def _failure(p, verb):
    """The error of a failed command: its one line on stderr (the CLI's own message)."""
    msg = p.stderr.decode("utf-8", "replace").strip().removeprefix("sandbench: ")
    return SandbenchError(msg or f"sandbench {verb} failed with status {p.returncode}", p.returncode)


class Sandbench:
    """A thin client: one method per CLI verb an agent needs, results from --json."""

    def __init__(self, root=None, binary=None):
        self.binary = binary or os.environ.get("SANDBENCH", "sandbench")
        self.root = root

    def run(self, *args, stdin=None, ok=(0,)):
        """Runs `sandbench [--root R] ARGS`; returns the CompletedProcess, or
        raises SandbenchError when its status is not in `ok`."""
        argv = [self.binary] + (["--root", self.root] if self.root else []) + [str(a) for a in args]
        try:
            p = subprocess.run(argv, input=stdin, capture_output=True)
        except OSError as e:
            raise SandbenchError(f"cannot run {self.binary}: {e.strerror}") from e
        if p.returncode not in ok:
            raise _failure(p, args[0])
        return p

    def json(self, *args, stdin=None):
        return json.loads(self.run(*args, "--json", stdin=stdin).stdout)

    # sandboxes
    def create(self, name, image, network=False, extra=()):
        return self.json("create", name, "--image", image, "--network", "on" if network else "off", *extra)

    def inspect(self, name):
        return self.json("inspect", name)

    def list(self):
        return self.json("ls")

    def remove(self, name, force=False):
        self.run("rm", *(["--force"] if force else []), name)

    def exec(self, name, command, cwd=None, timeout=None):
        """Runs a command (a list of words, or a string for `sh -c`) and returns
        {"exit_code", "stdout", "stderr", "duration_ms", "timed_out"}."""
        argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
        opts = (["--cwd", cwd] if cwd else []) + (["--timeout", timeout] if timeout else [])
        # the command's own status passes through: any status with a JSON document is a result
        p = self.run("exec", name, *opts, "--json", "--", *argv, ok=range(256))
        try:
            return json.loads(p.stdout)
        except ValueError:
            raise _failure(p, "exec") from None

    # files: one side is NAME:/path
    def copy(self, src, dst, recursive=False):
        return self.json("cp", *(["-r"] if recursive else []), src, dst)

    def read_file(self, name, path):
        """The bytes of one file in the sandbox (cp refuses anything else; to - it writes a tar stream)."""
        with tarfile.open(fileobj=io.BytesIO(self.run("cp", f"{name}:{path}", "-").stdout)) as tar:
            return tar.extractfile(tar.next()).read()

    # sessions
    def session_start(self, name, session, reuse=True, cwd=None, shell=None):
        opts = (["--reuse"] if reuse else []) + (["--cwd", cwd] if cwd else []) + (["--shell", shell] if shell else [])
        return self.json("session", "start", name, session, *opts)

    def session_send(self, name, session, text, newline=True):
        """Types text (a newline after it unless newline=False); returns the output offset then."""
        data = (text + ("\n" if newline else "")).encode()
        return self.json("session", "send", name, session, "-", stdin=data)["offset"]

    def session_ctrl(self, name, session, key):
        """Sends Ctrl-<key>, key one of c, d, z; returns the output offset then."""
        return self.json("session", "send", name, session, "--ctrl", key)["offset"]

    def session_read(self, name, session, since=None, wait_idle=None, first_timeout=None, max_wait=None):
        """The output from `since` until the prompt, a pause or a deadline (docs/sessions.md)."""
        opts = []
        for flag, value in (("--since", since), ("--wait-idle", wait_idle),
                            ("--first-timeout", first_timeout), ("--max-wait", max_wait)):
            if value is not None:
                opts += [flag, value]
        return self.json("session", "read", name, session, *opts)

    def session_kill(self, name, session, signal="TERM"):
        self.run("session", "kill", name, session, "--signal", signal)

    def sessions(self, name=None):
        return self.json("session", "ls", *([name] if name else []))


_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def clean_output(text):
    """Terminal output as Agent Zero's shells return it: no escape sequences or
    NULs, \\n line ends, each line's last carriage-return segment."""
    text = _ANSI.sub("", text).replace("\x00", "").replace("\r\n", "\n")
    lines = []
    for line in text.split("\n"):
        parts = [p for p in line.split("\r") if p.strip()]
        lines.append(parts[-1].rstrip() if parts else line)
    return "\n".join(lines).lstrip("\r ")


# a command that is a lone control character is that key, not a line of text
_CTRL_KEYS = {"\x03": "c", "\x04": "d", "\x1a": "z"}


class SandbenchInteractiveSession:
    """Agent Zero's shell interface (connect, send_command, read_output,
    close) on a sandbench session: a persistent shell in a sandbox whose
    prompt, root@NAME:DIR# , matches the framework's prompt patterns.
    Closing kills the session, so a reset (close, then connect) starts a
    fresh shell in the same session id."""

    def __init__(self, sandbox, session="a0-0", cwd=None, shell=None, root=None, binary=None):
        self.client = Sandbench(root=root, binary=binary)
        self.sandbox, self.session, self.cwd, self.shell = sandbox, str(session), cwd, shell
        self.offset = None   # the first output byte not read yet
        self.full_output = ""

    def _call(self, method, *args, **kwargs):
        # the CLI blocks; keep the agent's event loop running meanwhile
        return asyncio.to_thread(getattr(self.client, method), self.sandbox, self.session, *args, **kwargs)

    def _connected(self):
        if self.offset is None:
            raise SandbenchError(f"session '{self.session}' of sandbox '{self.sandbox}' is not connected")

    async def connect(self):
        info = await self._call("session_start", reuse=True, cwd=self.cwd, shell=self.shell)
        self.offset = info["offset"]   # past the banner and the first prompt
        self.full_output = ""

    async def close(self):
        if self.offset is None:
            return
        self.offset = None
        try:
            await self._call("session_kill")
        except SandbenchError as e:
            if e.status not in (3, 4):   # gone (3) or exited already (4) is closed
                raise

    async def send_command(self, command):
        self._connected()
        self.full_output = ""
        if command in _CTRL_KEYS:
            await self._call("session_ctrl", _CTRL_KEYS[command])
        else:
            await self._call("session_send", command)

    async def read_output(self, timeout=0, reset_full_output=False):
        """Returns (full_output, partial_output): everything since the last
        command, and what this call read (None when nothing). With a timeout
        it waits up to that many seconds for output, returning when the
        prompt is back or output pauses for 10 ms (as the local shell does)."""
        self._connected()
        if reset_full_output:
            self.full_output = ""
        waits = {"wait_idle": 0.01, "first_timeout": 0.01, "max_wait": timeout} if timeout > 0 else {}
        r = await self._call("session_read", since=self.offset, **waits)
        self.offset = r["offset"]
        self.full_output += r["output"]
        partial = clean_output(r["output"])
        return clean_output(self.full_output), partial or None
