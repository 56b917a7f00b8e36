"""Finding and running the neardup command line."""

import json
import os
import shutil
import subprocess
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))


class NeardupNotFound(RuntimeError):
    """No neardup command line was found; the message lists every place that was tried."""


class NeardupError(RuntimeError):
    """The command line failed: .returncode, .stderr (its whole standard error), .command (the
    arguments after `neardup`)."""

    def __init__(self, command, returncode, stderr):
        self.command = list(command)
        self.returncode = returncode
        self.stderr = stderr
        message = _message(stderr) or '(nothing on stderr)'
        name = list(command[:1])
        if command[:1] and command[0] in _GROUPS and len(command) > 1:
            name.append(command[1])
        super().__init__('neardup %s failed (exit status %s): %s' % (' '.join(name), returncode, message))


_GROUPS = ('simhash', 'passages', 'similar', 'doubri', 'onion', 'dupi', 'dedup-stage')


def _message(stderr):
    """stderr without progress or summary JSON lines: what the CLI said went wrong."""
    lines = [l for l in stderr.splitlines() if l.strip() and not l.lstrip().startswith('{')]
    return '\n'.join(lines[-20:]).strip()


def _recorded_root():
    """The npm package folder this package was installed from (written into the wheel by its build)."""
    try:
        from . import _origin
    except ImportError:
        return None
    return getattr(_origin, 'NPM_PACKAGE', None)


def _node():
    node = os.environ.get('NEARDUP_NODE') or shutil.which('node')
    if not node:
        raise NeardupNotFound('found the neardup CLI script but no `node` on PATH (set NEARDUP_NODE to the Node.js executable)')
    return node


def _command_for(path):
    if path.endswith(('.js', '.mjs', '.cjs')):
        return [_node(), path]
    return [path]


def _package_candidates():
    """The CLI of the npm package this Python package sits in (or was installed from): its dist/cli/main.js,
    then the project's node_modules/.bin/neardup beside it."""
    roots = [os.path.dirname(os.path.dirname(_HERE))]  # <npm package>/python/neardup -> <npm package>
    recorded = _recorded_root()
    if recorded and os.path.abspath(recorded) not in roots:
        roots.append(os.path.abspath(recorded))
    out = []
    for root in roots:
        out.append(os.path.join(root, 'dist', 'cli', 'main.js'))
        out.append(os.path.join(os.path.dirname(root), '.bin', 'neardup'))  # <project>/node_modules/.bin
    return out


def find_cli():
    """The neardup command line as an argument list: $NEARDUP_BIN, then the npm package this Python package
    belongs to, then `neardup` on PATH. Raises NeardupNotFound listing what was tried."""
    tried = []
    env = os.environ.get('NEARDUP_BIN')
    if env:
        if os.path.isfile(env):
            return _command_for(os.path.abspath(env))
        on_path = shutil.which(env)
        if on_path:
            return _command_for(on_path)
        raise NeardupNotFound('NEARDUP_BIN=%s is not a file or a command on PATH' % env)
    tried.append('$NEARDUP_BIN (not set)')
    for c in _package_candidates():
        if os.path.isfile(c) and (c.endswith('.js') or os.access(c, os.X_OK)):
            return _command_for(c)
        tried.append(c)
    on_path = shutil.which('neardup')
    if on_path:
        return _command_for(on_path)
    tried.append('`neardup` on PATH')
    raise NeardupNotFound(
        'cannot find the neardup command line; tried: %s. Set NEARDUP_BIN to it (e.g. '
        'node_modules/.bin/neardup of the project that installed neardup), or install the Python package from '
        'the npm package\'s python/ folder (pip install node_modules/neardup/python)' % '; '.join(tried))


def option_args(options):
    """Python keyword options as CLI options: num_perm=128 -> --num-perm 128, fast=True -> --fast, a list
    repeats the option; None and False are left out."""
    args = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = '--' + key.replace('_', '-')
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [flag, os.fspath(v) if isinstance(v, os.PathLike) else str(v)]
        else:
            args += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return args


def parse_summary(stdout, stderr):
    """The JSON summary: stdout when it is one JSON object, else the last JSON object line of stderr that
    is not a progress line (those carry a "progress" key)."""
    text = stdout.strip()
    if text.startswith('{'):
        try:
            return json.loads(text)
        except ValueError:
            pass
    for line in reversed(stderr.splitlines()):
        line = line.strip()
        if line.startswith('{'):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict) and 'progress' not in value:
                return value
    return None


def run(args, stdin_records=None, stdout_file=None):
    """Runs `neardup ARGS`; stdin_records (an iterable of JSONL lines as bytes) is written to its standard
    input as it goes. Returns (stdout text, stderr text); raises NeardupError when it fails. Standard error
    goes to an anonymous temporary file (no pipe to fill, nothing left behind)."""
    command = find_cli() + list(args)
    with tempfile.TemporaryFile() as err, (stdout_file or tempfile.TemporaryFile()) as out:
        proc = subprocess.Popen(command, stdin=subprocess.PIPE if stdin_records is not None else subprocess.DEVNULL,
                                stdout=out, stderr=err)
        try:
            if stdin_records is not None:
                try:
                    for line in stdin_records:
                        proc.stdin.write(line)
                except BrokenPipeError:
                    pass  # the CLI stopped reading: its exit status and stderr say why
                finally:
                    try:
                        proc.stdin.close()
                    except BrokenPipeError:
                        pass
            rc = proc.wait()
        except BaseException:
            _stop(proc)
            raise
        err.seek(0)
        stderr = err.read().decode('utf-8', 'replace')
        out.seek(0)
        stdout = out.read().decode('utf-8', 'replace')
    if rc != 0:
        raise NeardupError(args, rc, stderr)
    return stdout, stderr


def _stop(proc):
    """Stops the CLI: SIGTERM first, so that it removes its temporary files (a spill folder) as it does on
    a signal; SIGKILL if it has not ended 10 s later."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def stream_lines(args, stdin_records=None):
    """Runs `neardup ARGS` and yields its stdout lines as they come; the CLI's failure is raised as
    NeardupError after its last line. stdin_records (JSONL lines as bytes) are written to an anonymous
    temporary file first, its standard input. Closing the generator early stops the process."""
    command = find_cli() + list(args)
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as stdin_file:
        stdin = subprocess.DEVNULL
        if stdin_records is not None:
            for line in stdin_records:
                stdin_file.write(line)
            stdin_file.flush()
            stdin_file.seek(0)
            stdin = stdin_file
        proc = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=err)
        finished = False
        try:
            for line in proc.stdout:
                yield line
            finished = True
        finally:
            if not finished and proc.poll() is None:
                _stop(proc)
            proc.stdout.close()
            rc = proc.wait()
        if rc != 0:
            err.seek(0)
            raise NeardupError(args, rc, err.read().decode('utf-8', 'replace'))
