# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rules of gpuhpc.slurm.dcgm_exporter's input that its argument spec
cannot express, as one list of problems (the role's preflight fails on it),
and what the role reads from nvidia-smi."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuhpc.slurm.plugins.module_utils import dcgm


def dcgm_exporter_problems(settings, core_package, exporter_package):
    """Messages naming the variable and the fix; [] for good input. ``settings``: the role's variables
    without the dcgm_exporter_ prefix."""
    return dcgm.problems(settings, core_package, exporter_package)


def dcgm_exporter_cuda_major(nvidia_smi):
    """The CUDA major version of the driver, from plain nvidia-smi's output; '' for none."""
    return dcgm.cuda_major(nvidia_smi)


class FilterModule(object):
    def filters(self):
        return {'dcgm_exporter_problems': dcgm_exporter_problems,
                'dcgm_exporter_cuda_major': dcgm_exporter_cuda_major}
