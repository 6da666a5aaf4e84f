import json
import os

import pytest
import yaml
from ansible_collections.gpuhpc.slurm.plugins.filter.grafana import (FilterModule, grafana_dashboard_price,
                                                                     grafana_dashboard_problems, grafana_ini_problems,
                                                                     grafana_problems)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))

DEFAULTS = yaml.safe_load(open(os.path.join(ROOT, 'roles', 'grafana', 'defaults', 'main.yml')))
GOOD = {k[len('grafana_'):]: v for k, v in DEFAULTS.items()}
# the templated defaults as the role settles them
GOOD.update(admin_password='s3cret "quoted"', prometheus_scrape_interval='15s', install='package',
            ini_managed={'server': {'http_port': 1}}, gpu_hour_price='0', currency='')


def problems(**changes):
    return grafana_problems(dict(GOOD, **changes))


def test_good_input_has_no_problem():
    assert problems() == []
    assert problems(root_url='https://grafana.example/', tls_cert_file='/c', tls_key_file='/k', install='files',
                    package_file='/srv/grafana_13.2.3_amd64.deb', package_sha256='A' * 64) == []
    assert problems(install='none', package_file='/srv/grafana_13.2.3_amd64.deb', package_sha256='A' * 64) == []
    assert problems(gpu_hour_price='2.5', currency='EUR') == [] and problems(gpu_hour_price=3) == []
    assert set(FilterModule().filters()) == {'grafana_problems', 'grafana_ini_problems', 'grafana_dashboard_problems',
                                             'grafana_dashboard_price'}


@pytest.mark.parametrize('changes, message', [
    (dict(admin_password=''), 'grafana_admin_password is empty'),
    (dict(admin_password='Admin'), "grafana_admin_password is 'admin'"),
    (dict(admin_password='a"""b'), 'grafana_admin_password holds a line break or three double quotes'),
    (dict(admin_user='a b'), "grafana_admin_user 'a b' is not a login name"),
    (dict(listen_address='[::]'), "grafana_listen_address '[::]' is not an address of the host"),
    (dict(port=70000), 'grafana_port 70000 is not a TCP port'),
    (dict(root_url='grafana.example'), "grafana_root_url 'grafana.example' is not"),
    (dict(tls_cert_file='/c'), 'go together: give both or neither'),
    (dict(tls_cert_file='c', tls_key_file='/k'), "grafana_tls_cert_file 'c' is not an absolute path"),
    (dict(prometheus_url='localhost:9090'), "grafana_prometheus_url 'localhost:9090' is not"),
    (dict(prometheus_scrape_interval='15'), "grafana_prometheus_scrape_interval '15' is not"),
    (dict(version='latest'), "grafana_version 'latest' is not"),
    (dict(repo_url='apt.grafana.com'), "grafana_repo_url 'apt.grafana.com' is not"),
    (dict(repo_key_url='gpg.key'), "grafana_repo_key_url 'gpg.key' is not"),
    (dict(repo_key_fingerprint='ABCD'), "grafana_repo_key_fingerprint 'ABCD' is not an OpenPGP fingerprint"),
    (dict(install=True), "grafana_install 'True' is not package, files or none"),
    (dict(install='files'), 'grafana_install is files but grafana_package_file is empty'),
    (dict(package_file='/srv/grafana.deb', package_sha256='a' * 64),
     "grafana_install is package (from Grafana's repository) but grafana_package_file is set"),
    (dict(package_file='grafana.deb', package_sha256='a' * 64), "'grafana.deb' is not an absolute path"),
    (dict(package_file='/srv/grafana.tgz', package_sha256='a' * 64), 'is neither a .deb nor an .rpm file'),
    (dict(package_file='/srv/grafana.deb'), 'grafana_package_file needs grafana_package_sha256'),
    (dict(package_sha256='a' * 64), 'grafana_package_sha256 is set but grafana_package_file is empty'),
    (dict(dashboards_folder=' '), 'grafana_dashboards_folder is empty'),
    (dict(gpu_hour_price='2,5'), "grafana_gpu_hour_price '2,5' is not a price"),
    (dict(gpu_hour_price=-1), "grafana_gpu_hour_price '-1' is not a price"),
    (dict(gpu_hour_price='inf'), "grafana_gpu_hour_price 'inf' is not a price"),
    (dict(currency='EUR\n'), "grafana_currency 'EUR\n' is not a currency"),
    (dict(ini_extra={'server': {'http_port': 1, 'domain': 'x'}}),
     'grafana_ini_extra: [server] http_port is set by the role'),
])
def test_each_rule_names_the_variable(changes, message):
    found = problems(**changes)
    assert any(message in p for p in found), found
    assert not any(GOOD['admin_password'] in p for p in found)


def test_ini_extra():
    assert grafana_ini_problems({'smtp': {'enabled': True, 'port': 25, 'host': 'mail'}}, {}) == []
    assert grafana_ini_problems({'a b': {}, 'x': 1, 'y': {'k': [1], 'a b': 1, 'z': 'l\nl'}}, {}) == [
        "section 'a b' is not a grafana.ini section name", '[x] is not a mapping of key: value',
        '[y] k must be a string, a number or true/false', "[y] 'a b' is not a grafana.ini key",
        '[y] z holds a line break or three double quotes in a row']


def write(tmp_path, name, value):
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return str(path)


def test_dashboards(tmp_path):
    (tmp_path / 'own').mkdir()
    own = [write(tmp_path / 'own', 'a.json', {'uid': 'a', 'title': 'A'})]
    good = write(tmp_path, 'b.json', {'uid': 'b', 'title': 'B'})
    assert grafana_dashboard_problems(own, [good], 'ds', '/dir') == []
    found = grafana_dashboard_problems(own, [
        write(tmp_path, 'broken.json', '{'), write(tmp_path, 'list.json', []),
        write(tmp_path, 'nouid.json', {'title': 'x'}), write(tmp_path, 'shared.json', {'uid': 's', 'title': 'S', 'x': '${DS_PROM}'}),
        write(tmp_path, 'twice.json', {'uid': 'a', 'title': 'T'}), str(tmp_path / 'none.json'), 'rel.json', '/x.yml',
    ] + [write(tmp_path / 'own', 'c.json', {'uid': 'c', 'title': 'C'})], 'ds', '/dir')
    text = '\n'.join(found)
    assert 'grafana_dashboards_extra[0] %s is not valid JSON' % (tmp_path / 'broken.json') in text
    assert 'or take it out of grafana_dashboards_extra' in text
    assert 'list.json is JSON but not a dashboard' in text
    assert 'nouid.json has no uid' in text
    assert 'put the data source uid ds in place of ${DS_...}' in text
    assert "twice.json has uid 'a', as the role's dashboard files/dashboards/a.json does" in text
    assert "grafana_dashboards_extra[5] '%s' is not a file on the Ansible controller" % (tmp_path / 'none.json') in text
    assert "grafana_dashboards_extra[6] 'rel.json' is not an absolute path" in text
    assert "grafana_dashboards_extra[7] '/x.yml' is not a path ending in .json" in text
    assert 'has the file name of' not in text
    found = grafana_dashboard_problems(own, [write(tmp_path, 'a.json', {'uid': 'z', 'title': 'Z'})], 'ds', '/dir')
    assert found == ["grafana_dashboards_extra[0] %s has the file name of the role's dashboard files/dashboards/a.json: "
                     'both go into /dir, so rename one' % (tmp_path / 'a.json')]


TEAM = os.path.join(ROOT, 'roles', 'grafana', 'files', 'dashboards', 'gpuhpc-team-gpu-usage.json')


def test_the_price_reaches_the_team_dashboard():
    """One price (the inventory's gpu_usage_price, as the report's): the constant variable the cost panel
    multiplies by, and the currency as that panel's unit."""
    with open(TEAM) as f:
        shipped = f.read()
    # the shipped file is what the filter writes for no price: a rerun with the same price changes nothing
    assert grafana_dashboard_price(shipped, 0) == shipped
    priced = json.loads(grafana_dashboard_price(shipped, '2.50', 'EUR'))
    [variable] = [v for v in priced['templating']['list'] if v['name'] == 'gpu_hour_price']
    assert variable['type'] == 'constant' and variable['query'] == '2.5' and variable['current']['value'] == '2.5'
    [cost] = [p for p in priced['panels'] if p['title'] == 'Cost by account']
    assert cost['fieldConfig']['defaults']['unit'] == 'suffix: EUR'
    assert cost['targets'][0]['expr'].endswith(' / 60 * $gpu_hour_price > 0)')
    # the GPU-hours it prices are the GPU-hours panel's
    [hours] = [p for p in priced['panels'] if p['title'] == 'GPU-hours by account']
    assert cost['targets'][0]['expr'].replace(' * $gpu_hour_price > 0', '') == hours['targets'][0]['expr']
    assert [p for p in priced['panels'] if p['title'] != 'Cost by account'] == [
        p for p in json.loads(shipped)['panels'] if p['title'] != 'Cost by account']
    other = '{"uid": "x", "title": "x", "panels": []}'
    assert grafana_dashboard_price(other, 2.5, 'EUR') == other


@pytest.mark.parametrize('price, text', [(0, '0'), (3, '3'), ('0.125', '0.125'), (2.5, '2.5'), (1e-7, '0')])
def test_price_text(price, text):
    with open(TEAM) as f:
        priced = json.loads(grafana_dashboard_price(f.read(), price))
    assert [v['query'] for v in priced['templating']['list'] if v['name'] == 'gpu_hour_price'] == [text]
