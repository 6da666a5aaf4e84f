"""Make the checkout importable as ansible_collections.gpuhpc.slurm."""
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS = os.path.join(ROOT, '.collections')
if not os.path.isdir(os.path.join(COLLECTIONS, 'ansible_collections', 'gpuhpc', 'slurm')):
    raise RuntimeError('run `make deps` first: it links this checkout into .collections')
sys.path.insert(0, COLLECTIONS)


@pytest.fixture
def run_module(capsys, monkeypatch):
    """Run a module's main() with the given arguments; return its JSON result."""
    from ansible.module_utils import basic
    from ansible.module_utils.common.text.converters import to_bytes

    def run(main, args, check_mode=False):
        payload = dict(args, _ansible_check_mode=check_mode, _ansible_diff=True)
        monkeypatch.setattr(basic, '_ANSIBLE_ARGS', to_bytes(json.dumps({'ANSIBLE_MODULE_ARGS': payload})))
        monkeypatch.setattr(basic, '_ANSIBLE_PROFILE', 'legacy', raising=False)
        with pytest.raises(SystemExit):
            main()
        result = json.loads(capsys.readouterr().out)
        # ansible-core 2.19 writes each warning as a structure ({"event": {"msg": ...}}), earlier ones as text
        if 'warnings' in result:
            result['warnings'] = [w['event']['msg'] if isinstance(w, dict) else w for w in result['warnings']]
        return result

    return run
