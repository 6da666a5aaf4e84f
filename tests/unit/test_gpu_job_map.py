"""The slurmd role's GPU job map prolog and epilog
(roles/slurmd/templates/gpu-job-map.sh.j2), rendered and run with the
environment slurmd gives them."""
import os
import subprocess

import jinja2
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEMPLATE = os.path.join(ROOT, 'roles', 'slurmd', 'templates', 'gpu-job-map.sh.j2')


@pytest.fixture
def scripts(tmp_path):
    with open(TEMPLATE) as f:
        template = jinja2.Template(f.read(), keep_trailing_newline=True)
    map_dir = tmp_path / 'gpu-jobs'
    paths = {}
    for name in ('prolog', 'epilog'):
        path = tmp_path / name
        path.write_text(template.render(ansible_managed='managed', __slurmd_script=name,
                                        slurm_gpu_job_map_dir=str(map_dir)))
        path.chmod(0o755)
        paths[name] = str(path)

    def run(name, job, gpus):
        env = dict(PATH=os.environ['PATH'], SLURM_JOB_ID=job)
        if gpus is not None:
            env['SLURM_JOB_GPUS'] = gpus
        return subprocess.run([paths[name]], env=env, capture_output=True, text=True, check=False)

    def files():
        return {p.name: p.read_text() for p in map_dir.iterdir()} if map_dir.exists() else {}

    return run, files


def test_one_file_per_gpu_with_the_job_id_then_gone(scripts):
    run, files = scripts
    assert run('prolog', '101', '0,2-3').returncode == 0
    assert files() == {'0': '101\n', '2': '101\n', '3': '101\n'}
    assert run('prolog', '101', '0,2-3').returncode == 0  # a rerun adds nothing
    assert files() == {'0': '101\n', '2': '101\n', '3': '101\n'}
    assert run('epilog', '101', '0,2-3').returncode == 0
    assert files() == {}


def test_a_shared_gpu_keeps_the_other_job(scripts):
    run, files = scripts
    run('prolog', '7', '1')
    run('prolog', '8', '1')
    assert files() == {'1': '7\n8\n'}
    run('epilog', '7', '1')
    assert files() == {'1': '8\n'}


@pytest.mark.parametrize('gpus', [None, '', 'GPU-1a2b', '-1'])
def test_no_gpus_or_unreadable_ids_change_nothing_and_never_fail(scripts, gpus):
    run, files = scripts
    result = run('prolog', '5', gpus)
    assert result.returncode == 0, result.stderr
    assert files() == {}
