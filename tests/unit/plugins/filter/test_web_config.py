import pytest

from ansible_collections.gpuhpc.slurm.plugins.filter.web_config import FilterModule, web_config_problems

GOOD = dict(enabled=True, username='prometheus', password='s3cr3t: "quoted"', pki_dir='/srv/site/pki', ca_cert='',
            ca_key='', cert_days=825)


def problems(**changes):
    return web_config_problems(dict(GOOD, **changes))


def test_good_input_and_the_switch_off_have_no_problem(tmp_path):
    assert problems() == []
    assert problems(enabled=False, password='', pki_dir='relative') == []
    (tmp_path / 'ca.pem').write_text('x')
    (tmp_path / 'ca-key.pem').write_text('x')
    assert problems(ca_cert=str(tmp_path / 'ca.pem'), ca_key=str(tmp_path / 'ca-key.pem')) == []


@pytest.mark.parametrize('changes, words', [
    (dict(password=''), 'web_config_password is empty'),
    (dict(password='x' * 80), 'longer than 72 bytes'),
    (dict(username='a:b'), "web_config_username 'a:b'"),
    (dict(pki_dir='pki'), "web_config_pki_dir 'pki' is not an absolute path"),
    (dict(ca_cert='/srv/ca.pem'), 'go together'),
    (dict(ca_cert='/nonexistent/ca.pem', ca_key='/nonexistent/ca-key.pem'), "web_config_ca_cert '/nonexistent/ca.pem' is not a file"),
    (dict(cert_days=30), "web_config_cert_days '30'"),
    (dict(cert_days='many'), "web_config_cert_days 'many'"),
])
def test_each_problem_is_named(changes, words):
    found = problems(**changes)
    assert any(words in p for p in found), found
    assert not any(GOOD['password'] in p for p in found)


def test_the_filter_is_registered():
    assert FilterModule().filters()['web_config_problems'] is web_config_problems
