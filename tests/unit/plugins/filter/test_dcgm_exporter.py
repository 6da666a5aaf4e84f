import os
import re

import pytest
import yaml
from ansible_collections.gpuhpc.slurm.plugins.filter.dcgm_exporter import (
    FilterModule, dcgm_exporter_cuda_major, dcgm_exporter_problems)
from ansible_collections.gpuhpc.slurm.plugins.module_utils import dcgm

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))

DEFAULTS = yaml.safe_load(open(os.path.join(ROOT, "roles", "dcgm_exporter", "defaults", "main.yml")))
GOOD = {k[len('dcgm_exporter_'):]: v for k, v in DEFAULTS.items()}
GOOD['job_map_dir'] = '/run/gpuhpc/gpu-jobs'
CORE = 'datacenter-gpu-manager-4-core'
EXPORTER = 'datacenter-gpu-manager-exporter'
SHA = 'a' * 64


def problems(**changes):
    return dcgm_exporter_problems(dict(GOOD, **changes), CORE, EXPORTER)


def test_the_defaults_have_no_problem():
    assert problems() == []
    assert FilterModule().filters()['dcgm_exporter_problems'] is dcgm_exporter_problems


def test_the_cuda_major_version_of_a_real_driver():
    # Plain nvidia-smi on an H200 with driver 580.159.04 ("CUDA Version: 13.0").
    with open(os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'nvidia_smi', 'h200-driver-580.159.04.txt')) as f:
        assert dcgm_exporter_cuda_major(f.read()) == '13'
    assert FilterModule().filters()['dcgm_exporter_cuda_major'] is dcgm_exporter_cuda_major


@pytest.mark.parametrize('out', ['', None, 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.',
                                 '| NVIDIA-SMI 535.54.03   Driver Version: 535.54.03   CUDA Version: N/A |'])
def test_no_cuda_major_version_without_one_in_the_output(out):
    assert dcgm_exporter_cuda_major(out) == ''


def test_the_field_list_is_dcgm_4s():
    assert len(dcgm.DCGM_FIELDS) == len(set(dcgm.DCGM_FIELDS)) > 600
    assert all(re.fullmatch('DCGM_FI_[A-Z0-9_]+', name) for name in dcgm.DCGM_FIELDS)
    assert dcgm.DCGM_FIELDS[:2] == ('DCGM_FI_UNKNOWN', 'DCGM_FI_DRIVER_VERSION')
    assert 'DCGM_EXP_XID_ERRORS_COUNT' in dcgm.EXPORTER_FIELDS


@pytest.mark.parametrize('changes, message', [
    (dict(counters_extra=[{'field': 'DCGM_FI_DEV_GPU_TEMPP', 'type': 'gauge', 'help': 'typo'}]),
     'dcgm_exporter_counters_extra[0] (DCGM_FI_DEV_GPU_TEMPP): DCGM_FI_DEV_GPU_TEMPP is not a DCGM 4 field'),
    (dict(counters_extra=[{'field': 'DCGM_FI_DEV_GPU_TEMP', 'type': 'gauge', 'help': 'again'}]),
     'dcgm_exporter_counters_extra[0] (DCGM_FI_DEV_GPU_TEMP): DCGM_FI_DEV_GPU_TEMP is already listed in '
     'dcgm_exporter_counters[3]; list each field once'),
    (dict(counters_extra=[{'field': 'DCGM_FI_DEV_PSTATE', 'type': 'gauge', 'help': 'two\nlines'}]),
     'dcgm_exporter_counters_extra[0] (DCGM_FI_DEV_PSTATE): help must be one non-empty line of text'),
    (dict(listen_address='9400'), "dcgm_exporter_listen_address '9400' is not [ADDRESS]:PORT"),
    (dict(collect_interval_ms=50), 'dcgm_exporter_collect_interval_ms is 50: give a whole number'),
    (dict(collect_interval_ms='1e4'), 'dcgm_exporter_collect_interval_ms is 1e4'),
    (dict(dcgm_version='3.3.9'), "dcgm_exporter_dcgm_version '3.3.9' is not a DCGM 4 package version"),
    (dict(version='latest'), "dcgm_exporter_version 'latest' is not a dcgm-exporter version"),
    (dict(cuda_major='12.4'), "dcgm_exporter_cuda_major '12.4' is not a CUDA major version"),
    (dict(repo_base_url='ftp://mirror/cuda'), "dcgm_exporter_repo_base_url 'ftp://mirror/cuda' is not an http(s)://"),
    (dict(repo_key_url='mirror/key.pub'), "dcgm_exporter_repo_key_url 'mirror/key.pub' is not"),
    (dict(repo_key_fingerprint='A4B469963BF863CC'), "'A4B469963BF863CC' is not an OpenPGP fingerprint"),
    (dict(install='repo'), "dcgm_exporter_install 'repo' is not package or files"),
    (dict(install='files'), 'dcgm_exporter_install is files but dcgm_exporter_package_files is empty'),
    (dict(install='files', package_files=[{'src': 'core.deb', 'sha256': SHA}]),
     "dcgm_exporter_package_files[0]: src 'core.deb' is not an absolute path"),
    (dict(install='files', package_files=[{'sha256': SHA}]), 'dcgm_exporter_package_files[0] has no src'),
    (dict(install='files', package_files=[{'src': '/srv/%s_4.6.0-1_amd64.deb' % CORE, 'sha256': 'abc'}]),
     'dcgm_exporter_package_files[0] (%s_4.6.0-1_amd64.deb): sha256 is missing' % CORE),
    (dict(install='files', package_files=[{'src': '/srv/%s_4.6.0-1_amd64.deb' % CORE, 'sha256': SHA}]),
     'dcgm_exporter_package_files has no %s package file' % EXPORTER),
    (dict(exporter_install='binary'), "dcgm_exporter_exporter_install 'binary' is not package or release"),
    (dict(exporter_install='release'),
     'dcgm_exporter_exporter_install is release but dcgm_exporter_release_url and dcgm_exporter_release_file are empty'),
    (dict(exporter_install='release', release_file='/srv/dcgm-exporter'), 'dcgm_exporter_release_sha256 must be'),
    (dict(exporter_install='release', release_url='/srv/dcgm-exporter', release_sha256=SHA),
     "dcgm_exporter_release_url '/srv/dcgm-exporter' is not an http(s):// URL"),
    (dict(exporter_install='release', release_file='srv/dcgm-exporter', release_sha256=SHA),
     "dcgm_exporter_release_file 'srv/dcgm-exporter' is not an absolute path on the Ansible controller"),
    (dict(job_map_dir='run/gpu-jobs'), "dcgm_exporter_job_map_dir 'run/gpu-jobs' is not an absolute directory"),
    (dict(job_map_dir='/run/gpu-jobs/'), "dcgm_exporter_job_map_dir '/run/gpu-jobs/' is not"),
    (dict(user='root'), "dcgm_exporter_user 'root' is not an unprivileged user name"),
    (dict(user='Dcgm'), "dcgm_exporter_user 'Dcgm' is not"),
    (dict(extra_args=['--a 1']), 'this is not one argument (no spaces, quotes or backslashes): --a 1'),
])
def test_each_rule_names_the_variable(changes, message):
    found = problems(**changes)
    assert any(message in p for p in found), found


def test_good_variations_pass():
    files = [{'src': 'https://mirror/%s_4.6.0-1_amd64.deb' % CORE, 'sha256': SHA},
             {'src': '/srv/%s_4.8.3-1_amd64.deb' % EXPORTER, 'sha256': SHA.upper()}]
    assert problems(install='files', package_files=files) == []
    assert problems(install='files', package_files=files[:1], exporter_install='release',
                    release_file='/srv/dcgm-exporter', release_sha256=SHA) == []
    assert problems(exporter_install='release', release_url='https://files.example/dcgm-exporter',
                    release_sha256=SHA) == []
    assert problems(listen_address='[::]:9400', cuda_major='12', repo_key_url='file:///srv/key.pub',
                    repo_key_fingerprint='EB69 3B30 35CD 5710 E231 E123 A4B4 6996 3BF8 63CC') == []
    assert problems(install='files', package_files=files, repo_base_url='') == []


def test_counters_of_another_shape_are_left_to_the_argument_spec():
    assert problems(counters=['DCGM_FI_DEV_GPU_TEMP'], counters_extra=None) == []
