"""A minimal PEP 517 / PEP 660 build backend for the neardup Python package, standard library only, so that
`pip install ./python` works offline (pip installs no build requirements for it).

The wheel holds neardup/*.py, plus neardup/_origin.py naming the npm package folder this python/ folder is
in (when it is one: its package.json is neardup's), so an installed copy still finds that package's CLI.
"""

import base64
import hashlib
import io
import json
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the python/ folder
PACKAGE = 'neardup'


def _project():
    """name, version, description, requires-python from pyproject.toml's [project] table (simple key = "value"
    lines: all this backend needs, without a TOML parser on Python < 3.11)."""
    with open(os.path.join(HERE, 'pyproject.toml'), encoding='utf-8') as f:
        text = f.read()
    table = re.search(r'^\[project\]\n(.*?)(?=^\[|\Z)', text, re.S | re.M).group(1)
    out = {}
    for key in ('name', 'version', 'description', 'requires-python'):
        m = re.search(r'^%s\s*=\s*"([^"]*)"' % re.escape(key), table, re.M)
        if not m:
            raise RuntimeError('pyproject.toml: [project] has no %s' % key)
        out[key] = m.group(1)
    return out


def _metadata(p):
    lines = ['Metadata-Version: 2.1', 'Name: %s' % p['name'], 'Version: %s' % p['version'],
             'Summary: %s' % p['description'], 'License: MIT', 'Requires-Python: %s' % p['requires-python'],
             'Provides-Extra: numpy', 'Requires-Dist: numpy; extra == "numpy"',
             'Description-Content-Type: text/markdown', '', '']
    readme = os.path.join(HERE, 'README.md')
    body = open(readme, encoding='utf-8').read() if os.path.exists(readme) else ''
    return '\n'.join(lines) + body


def _npm_root():
    root = os.path.dirname(HERE)
    try:
        with open(os.path.join(root, 'package.json'), encoding='utf-8') as f:
            if json.load(f).get('name') == 'neardup':
                return root
    except (OSError, ValueError):
        pass
    return None


def _sources():
    src = os.path.join(HERE, PACKAGE)
    return sorted(n for n in os.listdir(src) if n.endswith('.py') and n != '_origin.py')


class _Wheel:
    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED)
        self.records = []

    def add(self, name, data):
        if isinstance(data, str):
            data = data.encode('utf-8')
        info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
        self.records.append('%s,sha256=%s,%d' % (name, digest, len(data)))

    def close(self, dist_info):
        record = dist_info + '/RECORD'
        self.records.append(record + ',,')
        info = zipfile.ZipInfo(record, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        self.zip.writestr(info, '\n'.join(self.records) + '\n')
        self.zip.close()


def _build(wheel_directory, editable):
    p = _project()
    dist_info = '%s-%s.dist-info' % (p['name'], p['version'])
    name = '%s-%s-py3-none-any.whl' % (p['name'], p['version'])
    w = _Wheel(os.path.join(wheel_directory, name))
    if editable:
        w.add('%s.pth' % PACKAGE, HERE + '\n')
    else:
        for f in _sources():
            with open(os.path.join(HERE, PACKAGE, f), 'rb') as fh:
                w.add('%s/%s' % (PACKAGE, f), fh.read())
        root = _npm_root()
        w.add('%s/_origin.py' % PACKAGE, '"""Written by the build: the npm package this copy was installed from."""\n'
              'NPM_PACKAGE = %r\n' % root)
    w.add(dist_info + '/METADATA', _metadata(p))
    w.add(dist_info + '/WHEEL', 'Wheel-Version: 1.0\nGenerator: neardup ndbackend\nRoot-Is-Purelib: true\nTag: py3-none-any\n')
    w.add(dist_info + '/top_level.txt', PACKAGE + '\n')
    w.close(dist_info)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _build(wheel_directory, False)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _build(wheel_directory, True)


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = '%s-%s' % (p['name'], p['version'])
    name = base + '.tar.gz'
    with tarfile.open(os.path.join(sdist_directory, name), 'w:gz', format=tarfile.PAX_FORMAT) as tar:
        files = ['pyproject.toml', 'README.md', '_build/ndbackend.py'] + ['%s/%s' % (PACKAGE, f) for f in _sources()]
        for f in files:
            full = os.path.join(HERE, f)
            if os.path.exists(full):
                tar.add(full, arcname='%s/%s' % (base, f))
        meta = _metadata(p).encode('utf-8')
        info = tarfile.TarInfo('%s/PKG-INFO' % base)
        info.size = len(meta)
        tar.addfile(info, io.BytesIO(meta))
    return name
