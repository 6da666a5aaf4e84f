import pytest
from ansible_collections.gpuhpc.slurm.plugins.test import gpuhpc
from ansible_collections.gpuhpc.slurm.plugins.test.gpuhpc import listen_address


@pytest.mark.parametrize('value', ['0.0.0.0:9100', '[::]:9100', ':9400', 'monitor.example:9090',
                                   '[fe80::1]:1', '127.0.0.1:65535'])
def test_listen_addresses(value):
    assert listen_address(value)


@pytest.mark.parametrize('value', ['9341', 'localhost', '0.0.0.0:0', '0.0.0.0:65536', '0.0.0.0:123456',
                                   '::1:9100', '[::1]9100', 'host :9100', '0.0.0.0:', 'http://h:9100', ''])
def test_not_listen_addresses(value):
    assert not listen_address(value)


def test_the_plugin_exports_it():
    assert gpuhpc.TestModule().tests()['listen_address'] is listen_address
