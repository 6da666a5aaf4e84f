"""The dcgm_exporter role on a machine without an NVIDIA GPU.

DCGM and dcgm-exporter never run here: this machine has no NVIDIA driver and
cannot reach NVIDIA's repositories (tests/integration/conftest.py says so in
the test summary). What runs, with ansible-playbook against local hosts:
the skip of a host without a driver (nothing changed), the failures of bad
input, the old variable names, the counters file and unit the role would
install (rendered and read back), the check of the repository key against
NVIDIA's pins (roles/pinned_repo; --check runs with the key in the cache),
and the whole install path in --check with a stand-in driver file (nothing
written)."""
import csv
import os
import re
import shutil
import subprocess

import pytest
import yaml

from local_play import ROOT, inventory, play, snapshot
from ansible_collections.gpuhpc.slurm.plugins.module_utils import dcgm

ROLE = os.path.join(ROOT, 'roles', 'dcgm_exporter')
DRIVER_FILE = '/proc/driver/nvidia/version'

# Everything the install path writes on a node; a skipped host must not have
# any of it touched.
WRITTEN = ['/etc/dcgm-exporter', '/etc/systemd/system/nvidia-dcgm-exporter.service', '/var/cache/gpuhpc-dcgm',
           '/etc/apt/sources.list.d/gpuhpc-nvidia-cuda.sources', '/etc/apt/preferences.d/gpuhpc-nvidia-cuda',
           '/etc/apt/keyrings/gpuhpc-nvidia-cuda.asc', '/etc/yum.repos.d/gpuhpc-nvidia-cuda.repo',
           '/usr/local/bin/dcgm-exporter']

# The fields the prometheus alert rules use.
# What roles/prometheus/files/rules read (tests/integration/test_prometheus_rules.py checks them against the rules too).
ALERT_FIELDS = ['DCGM_FI_DEV_GPU_TEMP', 'DCGM_FI_DEV_GPU_UTIL', 'DCGM_FI_DEV_FB_USED', 'DCGM_FI_DEV_FB_FREE',
                'DCGM_EXP_XID_ERRORS_COUNT', 'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL', 'DCGM_FI_DEV_ROW_REMAP_FAILURE',
                'DCGM_FI_DEV_ROW_REMAP_PENDING']

# Every field named (active or commented out) in NVIDIA/dcgm-exporter's
# etc/default-counters.csv and etc/dcp-metrics-included.csv (4.x).
NVIDIA_CSV_FIELDS = '''
DCGM_FI_DEV_SM_CLOCK DCGM_FI_DEV_MEM_CLOCK DCGM_FI_DEV_MEMORY_TEMP DCGM_FI_DEV_GPU_TEMP DCGM_FI_DEV_POWER_USAGE
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION DCGM_FI_DEV_PCIE_TX_THROUGHPUT DCGM_FI_DEV_PCIE_RX_THROUGHPUT
DCGM_FI_DEV_PCIE_REPLAY_COUNTER DCGM_FI_DEV_GPU_UTIL DCGM_FI_DEV_MEM_COPY_UTIL DCGM_FI_DEV_ENC_UTIL
DCGM_FI_DEV_DEC_UTIL DCGM_FI_DEV_XID_ERRORS DCGM_FI_DEV_POWER_VIOLATION DCGM_FI_DEV_THERMAL_VIOLATION
DCGM_FI_DEV_SYNC_BOOST_VIOLATION DCGM_FI_DEV_BOARD_LIMIT_VIOLATION DCGM_FI_DEV_LOW_UTIL_VIOLATION
DCGM_FI_DEV_RELIABILITY_VIOLATION DCGM_FI_DEV_FB_FREE DCGM_FI_DEV_FB_USED DCGM_FI_DEV_FB_RESERVED
DCGM_FI_DEV_ECC_SBE_VOL_TOTAL DCGM_FI_DEV_ECC_DBE_VOL_TOTAL DCGM_FI_DEV_ECC_SBE_AGG_TOTAL
DCGM_FI_DEV_ECC_DBE_AGG_TOTAL DCGM_FI_DEV_RETIRED_SBE DCGM_FI_DEV_RETIRED_DBE DCGM_FI_DEV_RETIRED_PENDING
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL
DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL DCGM_FI_DEV_NVLINK_BANDWIDTH_L0 DCGM_FI_DEV_VGPU_LICENSE_STATUS
DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS DCGM_FI_DEV_ROW_REMAP_FAILURE
DCGM_FI_DRIVER_VERSION DCGM_FI_NVML_VERSION DCGM_FI_DEV_BRAND DCGM_FI_DEV_SERIAL DCGM_FI_DEV_OEM_INFOROM_VER
DCGM_FI_DEV_ECC_INFOROM_VER DCGM_FI_DEV_POWER_INFOROM_VER DCGM_FI_DEV_INFOROM_IMAGE_VER DCGM_FI_DEV_VBIOS_VERSION
DCGM_FI_PROF_GR_ENGINE_ACTIVE DCGM_FI_PROF_SM_ACTIVE DCGM_FI_PROF_SM_OCCUPANCY DCGM_FI_PROF_PIPE_TENSOR_ACTIVE
DCGM_FI_PROF_DRAM_ACTIVE DCGM_FI_PROF_PIPE_FP64_ACTIVE DCGM_FI_PROF_PIPE_FP32_ACTIVE DCGM_FI_PROF_PIPE_FP16_ACTIVE
DCGM_FI_PROF_PCIE_TX_BYTES DCGM_FI_PROF_PCIE_RX_BYTES
'''.split()


def load(*parts):
    with open(os.path.join(ROLE, *parts)) as f:
        return yaml.safe_load(f)


def run(tmp_path, playbook, extra_vars=None, check=False, hosts=('gpu-01',)):
    """Run a playbook against local GPU nodes; return rc, the output on one
    line (quotes as written) and the raw output."""
    return play(tmp_path, playbook, inventory(dict(slurm_compute={h: None for h in hosts})), extra_vars, check)


ROLE_PLAY = '''
- hosts: all
  gather_facts: false
  roles:
    - gpuhpc.slurm.dcgm_exporter
  post_tasks:
    - ansible.builtin.debug:
        msg: "fact dcgm_exporter_skipped={{ dcgm_exporter_skipped }}"
'''

RENDER_PLAY = '''
- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuhpc.slurm.dcgm_exporter
        tasks_from: render
'''


def skip_message(host, driver_file=DRIVER_FILE):
    return f'{host}: no NVIDIA driver ({driver_file} missing): DCGM and dcgm-exporter not installed'


# --- hosts without a driver -------------------------------------------------

def test_a_host_without_a_driver_is_skipped_with_one_line_and_nothing_changed(tmp_path):
    """The role's detection file replaced by one that does not exist, so this
    holds on any machine; two hosts, one line each."""
    missing = str(tmp_path / 'no-such-driver' / 'version')
    before = snapshot(WRITTEN)
    rc, out, raw = run(tmp_path, ROLE_PLAY, {'__dcgm_exporter_driver_file': missing}, hosts=('gpu-01', 'gpu-02'))
    assert rc == 0, raw
    for host in ('gpu-01', 'gpu-02'):
        assert out.count(skip_message(host, missing)) == 1, raw
        assert re.search(host + r' +: ok=\d+ +changed=0 +unreachable=0 +failed=0', raw), raw
    assert out.count('fact dcgm_exporter_skipped=True') == 2, raw
    assert 'Install | ' not in out, raw
    assert snapshot(WRITTEN) == before


def test_this_machine_has_no_driver_and_the_role_says_so(tmp_path):
    """The role's real detection file, on this machine."""
    if os.path.exists(DRIVER_FILE):
        pytest.skip(f'{DRIVER_FILE} exists here: the role would install DCGM on this machine')
    before = snapshot(WRITTEN)
    rc, out, raw = run(tmp_path, ROLE_PLAY)
    assert rc == 0, raw
    assert out.count(skip_message('gpu-01')) == 1, raw
    assert re.search(r'gpu-01 +: ok=\d+ +changed=0 +unreachable=0 +failed=0', raw), raw
    assert snapshot(WRITTEN) == before


def test_require_gpu_fails_on_a_host_without_a_driver(tmp_path):
    missing = str(tmp_path / 'no-such-driver' / 'version')
    rc, out, raw = run(tmp_path, ROLE_PLAY, {'__dcgm_exporter_driver_file': missing, 'dcgm_exporter_require_gpu': True})
    assert rc != 0
    assert (f'gpu-01: no NVIDIA driver ({missing} missing) and dcgm_exporter_require_gpu is true: '
            'load the NVIDIA driver on this host') in out, raw
    assert 'DCGM and dcgm-exporter not installed' not in out


def test_the_detection_is_the_kernel_driver():
    assert load('vars', 'main.yml')['__dcgm_exporter_driver_file'] == DRIVER_FILE


# --- bad input ----------------------------------------------------------------

@pytest.mark.parametrize('play', [ROLE_PLAY, RENDER_PLAY], ids=['main', 'render'])
def test_an_unknown_counter_field_fails_naming_the_variable_and_the_field(tmp_path, play):
    extra = {'dcgm_exporter_counters_extra': [
        {'field': 'DCGM_FI_DEV_PSTATE', 'type': 'gauge', 'help': 'P-state'},
        {'field': 'DCGM_FI_DEV_GPU_TEMPP', 'type': 'gauge', 'help': 'typo'}],
        'dcgm_exporter_render_dir': str(tmp_path)}
    before = snapshot(WRITTEN)
    rc, out, raw = run(tmp_path, play, extra)
    assert rc != 0
    assert ('dcgm_exporter_counters_extra[1] (DCGM_FI_DEV_GPU_TEMPP): DCGM_FI_DEV_GPU_TEMPP is not a DCGM 4 field'
            in out), raw
    assert 'DCGM_FI_DEV_PSTATE is not' not in out
    assert not (tmp_path / 'gpuhpc-counters.csv').exists()
    assert snapshot(WRITTEN) == before


@pytest.mark.parametrize('extra, message', [
    ({'dcgm_exporter_counters_extra': [{'field': 'DCGM_FI_DEV_PSTATE', 'type': 'histo', 'help': 'x'}]},
     'value of type must be one of: gauge, counter, label, got: histo found in dcgm_exporter_counters_extra'),
    ({'dcgm_exporter_counters_extra': [{'field': 'DCGM_FI_DEV_GPU_TEMP', 'type': 'gauge', 'help': 'again'}]},
     'dcgm_exporter_counters_extra[0] (DCGM_FI_DEV_GPU_TEMP): DCGM_FI_DEV_GPU_TEMP is already listed in '
     'dcgm_exporter_counters[3]; list each field once'),
    ({'dcgm_exporter_counters_extra': [{'field': 'DCGM_FI_DEV_PSTATE', 'type': 'gauge', 'help': 'two\nlines'}]},
     'dcgm_exporter_counters_extra[0] (DCGM_FI_DEV_PSTATE): help must be one non-empty line of text'),
    ({'dcgm_exporter_counters': [{'field': 'DCGM_FI_DEV_GPU_TEMP', 'type': 'gauge'}]},
     'missing required arguments: help found in dcgm_exporter_counters'),
    ({'dcgm_exporter_collect_interval_ms': 50},
     'dcgm_exporter_collect_interval_ms is 50: give a whole number of milliseconds, at least 100'),
    ({'dcgm_exporter_job_map_dir': 'run/gpu-jobs'},
     "dcgm_exporter_job_map_dir 'run/gpu-jobs' is not an absolute directory path"),
    ({'dcgm_exporter_dcgm_version': '3.3.9'},
     "dcgm_exporter_dcgm_version '3.3.9' is not a DCGM 4 package version without epoch (e.g. 4.6.0-1)"),
    ({'dcgm_exporter_install': 'files'},
     'dcgm_exporter_install is files but dcgm_exporter_package_files is empty'),
    ({'dcgm_exporter_install': 'files',
      'dcgm_exporter_package_files': [{'src': '/srv/datacenter-gpu-manager-4-core_4.6.0-1_amd64.deb', 'sha256': 'abc'}]},
     'dcgm_exporter_package_files[0] (datacenter-gpu-manager-4-core_4.6.0-1_amd64.deb): sha256 is missing or not '
     '64 hex digits; dcgm_exporter_package_files has no datacenter-gpu-manager-exporter package file'),
    ({'dcgm_exporter_exporter_install': 'release', 'dcgm_exporter_release_file': '/srv/dcgm-exporter'},
     'dcgm_exporter_release_sha256 must be the SHA-256 (64 hex digits) of the dcgm-exporter executable; it is '
     'required with dcgm_exporter_exporter_install: release'),
    ({'dcgm_exporter_repo_key_fingerprint': 'A4B469963BF863CC'},
     "dcgm_exporter_repo_key_fingerprint 'A4B469963BF863CC' is not an OpenPGP fingerprint (40 hex digits)"),
    ({'dcgm_exporter_extra_args': ['--xid-count-window-size 600000']},
     'dcgm_exporter_extra_args: this is not one argument (no spaces, quotes or backslashes): '
     '--xid-count-window-size 600000'),
], ids=['type', 'duplicate', 'help', 'shape', 'interval', 'job-map-dir', 'dcgm-3', 'no-files', 'file-sha',
        'release-sha', 'short-key-id', 'extra-args'])
def test_bad_input_fails_naming_the_variable(tmp_path, extra, message):
    rc, out, raw = run(tmp_path, RENDER_PLAY, dict(extra, dcgm_exporter_render_dir=str(tmp_path)))
    assert rc != 0
    assert message in out, raw
    assert not (tmp_path / 'gpuhpc-counters.csv').exists()


@pytest.mark.parametrize('address', ['9400', 'gpu-01', ':0', ':99999', '0.0.0.0:', '[::1:9400', 'a b:9400'])
def test_a_bad_listen_address_fails(tmp_path, address):
    rc, out, raw = run(tmp_path, ROLE_PLAY, {'dcgm_exporter_listen_address': address,
                                             '__dcgm_exporter_driver_file': str(tmp_path / 'none')})
    assert rc != 0
    assert f"dcgm_exporter_listen_address '{address}' is not [ADDRESS]:PORT" in out, raw


def test_good_listen_addresses_pass(tmp_path):
    for i, address in enumerate([':9400', '0.0.0.0:9400', '[::]:9400', '10.1.2.3:9400', 'gpu-01.example:9400']):
        out_dir = tmp_path / str(i)
        out_dir.mkdir()
        rc, out, raw = run(out_dir, RENDER_PLAY, {'dcgm_exporter_listen_address': address,
                                                  'dcgm_exporter_render_dir': str(out_dir)})
        assert rc == 0, raw
        assert f'--address {address} ' in (out_dir / 'nvidia-dcgm-exporter.service').read_text()


# --- what the role would install -----------------------------------------------

def read_counters_like_dcgm_exporter(path):
    """dcgm-exporter reads the file with Go's encoding/csv (Comment '#'),
    trims spaces around each field and wants three fields a record."""
    rows = []
    with open(path, newline='') as f:
        for record in csv.reader(line for line in f if not line.startswith('#')):
            if not record:
                continue
            record = [field.strip(' ') for field in record]
            assert len(record) == 3, record
            rows.append(record)
    return rows


def test_the_rendered_counters_file_and_unit(tmp_path):
    extra = [{'field': 'DCGM_FI_DEV_PSTATE', 'type': 'gauge', 'help': 'Performance state, 0 = "highest"'},
             {'field': 'DCGM_FI_DEV_NVLINK_COUNT_RX_SYMBOL_ERRORS', 'type': 'counter', 'help': 'NVLink Rx symbol errors'}]
    rc, out, raw = run(tmp_path, RENDER_PLAY, {'dcgm_exporter_counters_extra': extra,
                                               'dcgm_exporter_extra_args': ['--xid-count-window-size', '600000'],
                                               'dcgm_exporter_render_dir': str(tmp_path)})
    assert rc == 0, raw

    rows = read_counters_like_dcgm_exporter(tmp_path / 'gpuhpc-counters.csv')
    defaults = load('defaults', 'main.yml')['dcgm_exporter_counters']
    assert rows == [[c['field'], c['type'], c['help']] for c in defaults + extra]
    types = {field: kind for field, kind, dummy in rows}
    for field in ALERT_FIELDS:
        assert field in types, field
    assert types['DCGM_FI_DEV_ECC_DBE_VOL_TOTAL'] == 'counter'
    assert types['DCGM_EXP_XID_ERRORS_COUNT'] == 'gauge'
    assert rows[-2:] == [[e['field'], e['type'], e['help']] for e in extra]

    unit = (tmp_path / 'nvidia-dcgm-exporter.service').read_text()
    exec_start = re.search(r'^ExecStart=((?:.*\\\n)*.*)$', unit, re.M).group(1)
    argv = exec_start.replace('\\\n', ' ').split()
    assert argv == ['/usr/bin/dcgm-exporter', '-f', '/etc/dcgm-exporter/gpuhpc-counters.csv',
                    '--address', ':9400', '--collect-interval', '15000',
                    '--remote-hostengine-info', '127.0.0.1:5555',
                    '--hpc-job-mapping-dir', '/run/gpuhpc/gpu-jobs', '--xid-count-window-size', '600000']
    for line in ['User=dcgm-exporter', 'NoNewPrivileges=true', 'ProtectSystem=strict', 'CapabilityBoundingSet=',
                 'ProtectHome=true', 'PrivateTmp=true', 'Restart=always', 'After=network-online.target nvidia-dcgm.service']:
        assert re.search('^' + re.escape(line) + '$', unit, re.M), line
    assert not re.search('^PrivateDevices=', unit, re.M)


def test_the_switch_gives_the_exporter_its_web_config(tmp_path):
    rc, out, raw = run(tmp_path, RENDER_PLAY, {'dcgm_exporter_render_dir': str(tmp_path), 'web_config_enabled': True,
                                               'web_config_password': 'Scr@pe: "x"',
                                               'web_config_pki_dir': str(tmp_path / 'pki')})
    assert rc == 0, raw
    assert 'Scr@pe' not in raw
    unit = (tmp_path / 'nvidia-dcgm-exporter.service').read_text()
    argv = re.search(r'^ExecStart=((?:.*\\\n)*.*)$', unit, re.M).group(1).replace('\\\n', ' ').split()
    assert argv[-2:] == ['--web-config-file', '/etc/gpuhpc/web/dcgm_exporter/web-config.yml'], argv


def test_the_rendered_unit_passes_systemd_analyze_verify(tmp_path):
    verify = shutil.which('systemd-analyze')
    if not verify:
        pytest.skip('systemd-analyze is not installed here')
    rc, out, raw = run(tmp_path, RENDER_PLAY, {'dcgm_exporter_render_dir': str(tmp_path),
                                               '__dcgm_exporter_bin': '/bin/true'})
    assert rc == 0, raw
    result = subprocess.run([verify, 'verify', str(tmp_path / 'nvidia-dcgm-exporter.service')],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0 and not (result.stdout + result.stderr).strip(), result.stdout + result.stderr


def test_the_release_option_runs_the_release_binary(tmp_path):
    rc, out, raw = run(tmp_path, RENDER_PLAY, {'dcgm_exporter_render_dir': str(tmp_path),
                                               'dcgm_exporter_exporter_install': 'release',
                                               'dcgm_exporter_release_url': 'https://files.example/dcgm-exporter',
                                               'dcgm_exporter_release_sha256': 'a' * 64,
                                               'dcgm_exporter_job_map_dir': '/run/slurm/gpu-map'})
    assert rc == 0, raw
    unit = (tmp_path / 'nvidia-dcgm-exporter.service').read_text()
    assert 'ExecStart=/usr/local/bin/dcgm-exporter \\' in unit
    assert '--hpc-job-mapping-dir /run/slurm/gpu-map' in unit


# --- the repository key, checked against NVIDIA's pins (roles/pinned_repo) -----------

def gpu_node(tmp_path):
    """Variables that make this machine a GPU node of a distribution the role
    knows, for --check runs of the install path; skips where it cannot be one."""
    with open('/etc/os-release') as f:
        release = dict(line.rstrip('\n').split('=', 1) for line in f if '=' in line)
    distro = release.get('ID', '').strip('"')
    if distro not in ('debian', 'ubuntu'):
        pytest.skip('the check-mode install path is exercised on Debian and Ubuntu')
    driver = tmp_path / 'version'
    driver.write_text('NVRM version: stand-in for the test\n')
    major = release.get('VERSION_ID', '').strip('"').split('.')[0]
    return {'__dcgm_exporter_driver_file': str(driver), 'dcgm_exporter_cuda_major': '12',
            '__dcgm_exporter_repo_dirs': {distro + major: 'debian12'}}


def key_vars(tmp_path, test_key, **pins):
    """A host whose cache holds the key already, so that --check checks it."""
    cache = tmp_path / 'cache'
    (cache / 'gnupg').mkdir(parents=True, mode=0o700)
    cache.chmod(0o755)
    shutil.copy(test_key['path'], cache / 'repo-key.asc')
    (cache / 'repo-key.asc').chmod(0o644)
    return dict(gpu_node(tmp_path), __dcgm_exporter_cache_dir=str(cache),
                dcgm_exporter_repo_key_url='file://' + test_key['path'], **pins)


def test_the_key_with_the_pinned_fingerprint_is_accepted(tmp_path, test_key):
    before = snapshot(WRITTEN + ['/etc/passwd', '/etc/group'])
    pinned = key_vars(tmp_path, test_key, dcgm_exporter_repo_key_fingerprint=test_key['fingerprint'])
    rc, out, raw = run(tmp_path, ROLE_PLAY, pinned, check=True)
    assert rc == 0, raw
    assert re.search(r'TASK \[gpuhpc\.slurm\.pinned_repo : Debian \| give apt the checked key\] \*+\nchanged:', raw), raw
    assert snapshot(WRITTEN + ['/etc/passwd', '/etc/group']) == before


def test_another_key_is_refused(tmp_path, test_key):
    pinned = 'EB693B3035CD5710E231E123A4B469963BF863CC'
    rc, out, raw = run(tmp_path, ROLE_PLAY, key_vars(tmp_path, test_key, dcgm_exporter_repo_key_fingerprint=pinned),
                       check=True)
    assert rc != 0
    assert (f'gpu-01: the signing key at file://{test_key["path"]} is not the pinned key (fingerprint {pinned}; '
            f'found {test_key["fingerprint"]}), so the repository was not configured. For a mirror that re-signs '
            'the repository set dcgm_exporter_repo_key_url and dcgm_exporter_repo_key_fingerprint.') in out, raw


@pytest.mark.parametrize('matches', [True, False], ids=['same', 'other'])
def test_the_sha256_pin_ignores_version_lines(tmp_path, test_key, matches):
    """RHEL's pin: the SHA-256 of the key file without its Version: lines, as
    NVIDIA's CUDA images check D42D0685.pub."""
    pin = test_key['sha256'] if matches else '0' * 64
    keys = {family: {'file': 'x.pub', 'fingerprint': '', 'sha256': pin} for family in ('Debian', 'RedHat')}
    rc, out, raw = run(tmp_path, ROLE_PLAY, key_vars(tmp_path, test_key, __dcgm_exporter_repo_keys=keys), check=True)
    if matches:
        assert rc == 0, raw
    else:
        assert rc != 0
        assert f'(SHA-256 {pin} without Version: lines; found {test_key["sha256"]})' in out, raw


def test_nvidias_keys_are_pinned():
    keys = load('vars', 'main.yml')['__dcgm_exporter_repo_keys']
    assert keys['Debian'] == dict(file='3bf863cc.pub', fingerprint='EB693B3035CD5710E231E123A4B469963BF863CC', sha256='')
    assert keys['RedHat']['file'] == 'D42D0685.pub'
    assert re.fullmatch('[0-9a-f]{64}', keys['RedHat']['sha256'])


# --- the install path, in check mode ------------------------------------------

def test_the_install_path_runs_in_check_mode_and_writes_nothing(tmp_path):
    """A stand-in driver file makes the host look like a GPU node; --check
    runs every install task that can run without NVIDIA's repository."""
    with open('/etc/os-release') as f:
        release = dict(line.rstrip('\n').split('=', 1) for line in f if '=' in line)
    if release.get('ID') != 'debian' or release.get('VERSION_ID', '').strip('"') != '12':
        pytest.skip('the check-mode install path is exercised on Debian 12, the lab and CI distribution')
    driver = tmp_path / 'version'
    driver.write_text('NVRM version: stand-in for the test\n')
    key = tmp_path / 'key.asc'
    key.write_text('not read in check mode\n')
    before = snapshot(WRITTEN + ['/etc/passwd', '/etc/group'])
    rc, out, raw = run(tmp_path, ROLE_PLAY, {'__dcgm_exporter_driver_file': str(driver),
                                             'dcgm_exporter_cuda_major': '12',
                                             'dcgm_exporter_repo_key_url': 'file://' + str(key)}, check=True)
    assert rc == 0, raw
    assert snapshot(WRITTEN + ['/etc/passwd', '/etc/group']) == before
    assert 'fact dcgm_exporter_skipped=False' in out, raw
    # what it would write
    assert 'URIs: https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/' in raw
    assert 'Signed-By: /etc/apt/keyrings/gpuhpc-nvidia-cuda.asc' in raw
    assert '+Pin: version 1:4.6.0-1' in raw and '+Pin: version *4.8.3-1' in raw
    assert '+Pin: origin "developer.download.nvidia.com"' in raw
    assert '+ExecStart=/usr/bin/dcgm-exporter \\' in raw
    assert re.search(r'TASK \[gpuhpc\.slurm\.dcgm_exporter : Install \| dcgm-exporter runs\] \*+\nskipping', raw), raw


# --- the field list -------------------------------------------------------------

def test_the_field_list_knows_every_field_nvidia_ships_and_every_default():
    known = set(dcgm.DCGM_FIELDS)
    exporter = set(dcgm.EXPORTER_FIELDS)
    assert len(known) > 600
    assert all(re.fullmatch('DCGM_FI_[A-Z0-9_]+', name) for name in known)
    assert not set(NVIDIA_CSV_FIELDS) - known
    defaults = load('defaults', 'main.yml')['dcgm_exporter_counters']
    assert not {c['field'] for c in defaults} - known - exporter
    assert set(ALERT_FIELDS) <= {c['field'] for c in defaults}
    for field in ['DCGM_FI_DEV_CLOCK_THROTTLE_REASONS', 'DCGM_FI_DEV_CLOCKS_EVENT_REASONS',
                  'DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL', 'DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL',
                  'DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL', 'DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL',
                  'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL', 'DCGM_FI_DEV_ECC_DBE_AGG_TOTAL']:
        assert field in known, field
    assert 'DCGM_FI_DEV_GPU_TEMPP' not in known
