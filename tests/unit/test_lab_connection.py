"""The lab's connection (lab/connection_plugins/lab_docker_api.py) asks
Ansible's own short commands again when docker exec loses their answer; a
command asked again must not fail for having run the first time. The
commands are as Ansible 2.18 sends them."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'lab', 'connection_plugins'))
import lab_docker_api  # noqa: E402  pylint: disable=wrong-import-position,import-error

TMP = ("/bin/sh -c '( umask 77 && mkdir -p \"` echo /root/.ansible/tmp `\"&& mkdir \"` echo "
       "/root/.ansible/tmp/ansible-tmp-1-2-3 `\" && echo ansible-tmp-1-2-3=\"` echo "
       "/root/.ansible/tmp/ansible-tmp-1-2-3 `\" ) && sleep 0'")


def test_the_temporary_folder_is_made_with_p_when_asked_again():
    again = lab_docker_api.again(TMP)
    assert again == TMP.replace('&& mkdir "` echo /root/.ansible/tmp/ansible-tmp',
                                '&& mkdir -p "` echo /root/.ansible/tmp/ansible-tmp')
    assert again.count('mkdir -p') == 2
    assert lab_docker_api.again(TMP.encode()) == again.encode()


def test_other_commands_are_asked_again_as_they_were():
    for cmd in ("/bin/sh -c 'echo ~ && sleep 0'", 'id -u && id -g'):
        assert lab_docker_api.again(cmd) == cmd


def test_what_counts_as_a_whole_answer():
    assert not lab_docker_api.whole(TMP, b'')
    assert lab_docker_api.whole(TMP, b'ansible-tmp-1-2-3=/root/.ansible/tmp/ansible-tmp-1-2-3\n')
    assert not lab_docker_api.whole('id -u && id -g', b'0\n')
    assert lab_docker_api.whole('id -u && id -g', b'0\n0\n')
    assert lab_docker_api.whole("/bin/sh -c 'chmod u+x /x && sleep 0'", b'')
