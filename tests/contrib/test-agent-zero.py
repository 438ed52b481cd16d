#!/usr/bin/python3
"""contrib/agent-zero/sandbench_shell.py against a real sandbox (as root,
runsc installed): the shell object driven the way Agent Zero's code
execution tool drives its shells (send, then poll read_output every 0.1 s
until one of its prompt patterns ends the output, a dialog pattern waits
after a pause, or a timeout), and the plain client. Run by make check; by
hand: SB_TOP_SRCDIR=. SB_TOP_BUILDDIR=. tests/contrib/test-agent-zero.py"""

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

SRCDIR = os.environ.get("SB_TOP_SRCDIR", ".")
BUILDDIR = os.environ.get("SB_TOP_BUILDDIR", ".")
sys.dont_write_bytecode = True   # nothing written into the source tree
sys.path.insert(0, os.path.join(SRCDIR, "contrib", "agent-zero"))
from sandbench_shell import Sandbench, SandbenchError, SandbenchInteractiveSession, clean_output  # noqa: E402

IMAGE = "busybox:test"
BOX = "a0box"          # busybox ash, the default image's shell
BASH_BOX = "a0bash"    # bash, the shell Agent Zero's own images have
# the framework's default patterns (its code execution plugin's default config)
PROMPTS = [re.compile(p) for p in (r"(\(venv\)).+[$#] ?$", r"root@[^:]+:[^#]+# ?$",
                                   r"[a-zA-Z0-9_.-]+@[^:]+:[^$#]+[$#] ?$", r"\(?.*\)?\s*PS\s+[^>]+> ?$")]
DIALOGS = [re.compile(p, re.IGNORECASE) for p in ("Y/N", "yes/no", r":\s*$", r"\?\s*$")]

root = None
client = None


def setUpModule():
    global root, client
    root = tempfile.mkdtemp(prefix="sbtest-a0-", dir="/var/tmp")
    client = Sandbench(root=root, binary=os.path.join(BUILDDIR, "sandbench"))
    client.run("image", "bootstrap", "--busybox", "--name", IMAGE, "--quiet")
    client.create(BOX, image=IMAGE)
    import_bash_image("bash:test")
    client.create(BASH_BOX, image="bash:test")


def import_bash_image(name):
    """The busybox rootfs with the host's bash (and its libraries) as root's shell."""
    tree = os.path.join(root, "bash-tree")
    shutil.copytree(client.json("image", "inspect", IMAGE)["rootfs"], tree, symlinks=True)
    libs = re.findall(r"(/\S+) \(0x", subprocess.run(["ldd", "/bin/bash"], capture_output=True, text=True).stdout)
    for path in ["/bin/bash"] + libs:
        os.makedirs(tree + os.path.dirname(path), exist_ok=True)
        if os.path.lexists(tree + path):
            os.unlink(tree + path)
        shutil.copy(path, tree + path)
    with open(os.path.join(tree, "etc/passwd")) as f:
        passwd = re.sub(r"^(root:.*):/bin/sh$", r"\1:/bin/bash", f.read(), flags=re.M)
    with open(os.path.join(tree, "etc/passwd"), "w") as f:
        f.write(passwd)
    subprocess.run(["tar", "-C", tree, "-cf", tree + ".tar", "."], check=True)
    client.run("image", "import", tree + ".tar", "--name", name, "--quiet")
    shutil.rmtree(tree)
    os.unlink(tree + ".tar")


def tearDownModule():
    try:
        for box in (BOX, BASH_BOX):
            client.remove(box, force=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def matches(lines, patterns):
    return any(p.search(line.strip()) for line in lines for p in patterns)


async def terminal(shell, command, first=30, between=15, dialog=1, max_exec=60):
    """One command as the framework runs it; returns (why it returned, output)."""
    await shell.send_command(command)
    start = last = time.monotonic()
    reset, got, output = True, False, ""
    while True:
        await asyncio.sleep(0.1)
        full, partial = await shell.read_output(timeout=1, reset_full_output=reset)
        reset = False
        now = time.monotonic()
        if partial:
            output, last, got = full, now, True
            if matches(output.splitlines()[-3:], PROMPTS):
                return "prompt", output
        if now - start > max_exec:
            return "max_exec", output
        if not got and now - start > first:
            return "no_output", output
        if got and now - last > between:
            return "pause", output
        if got and now - last > dialog and matches(output.splitlines()[-2:], DIALOGS):
            return "dialog", output


def run(coro):
    return asyncio.run(coro)


class Shell(unittest.TestCase):
    box = BOX

    def setUp(self):
        self.shell = SandbenchInteractiveSession(self.box, session=self.id().rsplit(".", 1)[-1], root=root,
                                                 binary=client.binary)
        run(self.shell.connect())

    def tearDown(self):
        run(self.shell.close())

    def test_state_kept_between_commands(self):
        why, out = run(terminal(self.shell, "cd /tmp && export SBA0=42"))
        self.assertEqual((why, out), ("prompt", f"root@{self.box}:/tmp#"))
        why, out = run(terminal(self.shell, 'echo "$PWD $SBA0"; printf "a\\rb\\033[1mc\\033[0m\\n"'))
        self.assertEqual(why, "prompt")
        self.assertEqual(out.splitlines(), ["/tmp 42", "bc", f"root@{self.box}:/tmp#"])
        # nothing new: no partial output, the full output of the last command stays
        full, partial = run(self.shell.read_output(timeout=0))
        self.assertIsNone(partial)
        self.assertEqual(full, out)

    def test_long_output_comes_whole(self):
        why, out = run(terminal(self.shell, "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); echo line $i; done"))
        self.assertEqual(why, "prompt")
        self.assertEqual(out.splitlines(), [f"line {i}" for i in range(1, 3001)] + [f"root@{self.box}:/workspace#"])
        # output in pauses comes in several reads: the full output gathers them
        why, out = run(terminal(self.shell, "for i in 1 2 3; do echo part $i; sleep 0.3; done"))
        self.assertEqual(out.splitlines(), ["part 1", "part 2", "part 3", f"root@{self.box}:/workspace#"])

    def test_dialog_answered_with_more_input(self):
        why, out = run(terminal(self.shell, "read -p 'Continue? (y/n) ' a; echo got $a"))
        self.assertEqual((why, out), ("dialog", "Continue? (y/n)"))
        why, out = run(terminal(self.shell, "y"))
        self.assertEqual(why, "prompt")
        self.assertEqual(out.splitlines()[0], "got y")

    def test_ctrl_c_ends_a_running_command(self):
        why, out = run(terminal(self.shell, "sleep 600; echo slept", first=1))
        self.assertEqual((why, out), ("no_output", ""))
        why, out = run(terminal(self.shell, "\x03"))
        self.assertEqual(why, "prompt")
        self.assertNotIn("slept", out)
        why, out = run(terminal(self.shell, "echo status $?"))
        self.assertEqual(out.splitlines()[0], "status 130")
        # the key went as Ctrl-C, not as a line of text: the timeline's lines are the two commands
        lines = [e["text"] for e in map(json.loads, client.run("timeline", self.box, "--json").stdout.splitlines())
                 if e["kind"] == "input" and e.get("session") == self.shell.session]
        self.assertEqual(lines, ["sleep 600; echo slept", "echo status $?"])

    def test_reset_starts_a_fresh_shell(self):
        run(terminal(self.shell, "cd /etc && export SBA0=1 && echo $$ > /tmp/a0pid"))
        run(self.shell.close())
        self.assertRaises(SandbenchError, run, self.shell.send_command("true"))
        run(self.shell.connect())
        why, out = run(terminal(self.shell, 'echo "$PWD [$SBA0] $(test $$ = $(cat /tmp/a0pid) && echo same)"'))
        self.assertEqual(why, "prompt")
        self.assertEqual(out.splitlines()[0], "/workspace []")

    def test_shell_that_exited(self):
        why, out = run(terminal(self.shell, "exit 4", first=1, between=1))
        self.assertIn((why, out.strip()), [("no_output", ""), ("pause", "exit")])   # ash is silent, bash says exit
        with self.assertRaises(SandbenchError) as e:
            run(self.shell.send_command("true"))
        self.assertEqual(str(e.exception), f"session '{self.shell.session}' of sandbox '{self.box}' has exited")
        run(self.shell.close())   # the framework's reset
        run(self.shell.connect())
        self.assertEqual(run(terminal(self.shell, "echo back"))[1].splitlines()[0], "back")


class BashShell(Shell):
    box = BASH_BOX

    def test_bash(self):
        why, out = run(terminal(self.shell, "echo $BASH_VERSION"))
        self.assertRegex(out.splitlines()[0], r"^\d+\.\d+\.")


class Client(unittest.TestCase):
    def test_exec_files_sessions(self):
        r = client.exec(BOX, "echo out; echo err >&2; exit 3")
        self.assertEqual((r["exit_code"], r["stdout"], r["stderr"]), (3, "out\n", "err\n"))
        self.assertEqual(client.exec(BOX, ["echo", "a b"])["stdout"], "a b\n")
        with tempfile.NamedTemporaryFile(dir=root) as f:
            f.write(b"payload\n")
            f.flush()
            client.copy(f.name, f"{BOX}:/workspace/in.txt")
        self.assertEqual(client.read_file(BOX, "/workspace/in.txt"), b"payload\n")
        client.session_start(BOX, "plain")
        off = client.session_send(BOX, "plain", "echo $((6*7))")
        r = client.session_read(BOX, "plain", since=off, max_wait=30)
        self.assertEqual((r["reason"], r["exit_code"], clean_output(r["output"])), ("prompt", 0, "42\nroot@a0box:/workspace#"))
        self.assertIn("plain", [s["id"] for s in client.sessions(BOX)])
        client.session_kill(BOX, "plain")
        self.assertEqual([s["state"] for s in client.sessions(BOX) if s["id"] == "plain"], ["exited"])

    def test_unknown_sandbox_and_session(self):
        with self.assertRaises(SandbenchError) as e:
            run(SandbenchInteractiveSession("nosuch", root=root, binary=client.binary).connect())
        self.assertEqual(str(e.exception), "no sandbox named 'nosuch'")
        self.assertEqual(e.exception.status, 3)
        with self.assertRaises(SandbenchError) as e:
            client.session_read(BOX, "nosuch")
        self.assertEqual(str(e.exception), f"sandbox '{BOX}' has no session 'nosuch'")

    def test_errors(self):
        with self.assertRaises(SandbenchError) as e:
            client.exec("nosuch", "true")
        self.assertEqual((str(e.exception), e.exception.status), ("no sandbox named 'nosuch'", 125))
        with self.assertRaises(SandbenchError) as e:
            client.read_file(BOX, "/workspace")
        self.assertEqual(str(e.exception), f"'{BOX}:/workspace' is a directory: copy it with -r")
        with self.assertRaises(SandbenchError) as e:
            client.read_file(BOX, "/workspace/missing")
        self.assertEqual(e.exception.status, 3)
        with self.assertRaises(SandbenchError) as e:
            Sandbench(binary="/nonexistent/sandbench").list()
        self.assertIn("cannot run /nonexistent/sandbench", str(e.exception))


if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("test-agent-zero: needs root (real sandboxes)")
    unittest.main(verbosity=2)
