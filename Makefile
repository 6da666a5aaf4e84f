# gpuhpc.slurm — the two commands a newcomer needs:
#   make lab    bring up the lab cluster and run site.yml against it
#   make test   the whole test suite (what CI runs)
# Each installs what it needs (a Docker engine, the pinned Python tools).

SHELL := /bin/bash
VENV := .venv/bin

.PHONY: help deps engine lab lab-down test lint galaxy sanity unit integration molecule bench bench-db bench-sacctmgr bench-exporter bench-exporter-lab bench-page bench-verify bench-scale build clean

help:
	@echo "make lab        bring up the lab cluster (containers) and run site.yml against it"
	@echo "make lab-down   remove the lab's containers, network and volumes (nothing else)"
	@echo "make test       lint + galaxy + ansible-test sanity + unit + integration + molecule"
	@echo "make lint | galaxy | sanity | unit | integration | molecule   one stage"
	@echo "make bench      time make lab from nothing and again (bench/lab.sh)"
	@echo "make bench-db   time the database check against a running lab (bench/db_check.sh)"
	@echo "make bench-sacctmgr  org chart of 1000 users, batched vs naive, on a running lab"
	@echo "make bench-exporter  the slurm exporter on 1000 nodes / 20000 jobs of generated Slurm output"
	@echo "make bench-exporter-lab  a scrape against a lab slurmctld holding 20000 jobs (bench/slurm_exporter_lab.sh)"
	@echo "make bench-page  time from a stopped or frozen slurmd to the page at the lab's webhook (bench/page_time.sh)"
	@echo "make bench-verify    the verify play's time and Prometheus' scrape figures on a running lab"
	@echo "make bench-scale  site.yml's first converge and no-op rerun at 12 and 48 GPU nodes (bench/scale.sh)"
	@echo "make build      build the collection tarball"

deps:
	@tools/deps.sh

engine:
	@tools/engine.sh

lab:
	@tools/lab.sh

lab-down: deps
	@if docker info >/dev/null 2>&1; then \
	  $(VENV)/ansible-playbook -i inventory/lab lab/down.yml; \
	else echo "[lab] no Docker engine answers: no lab to remove"; fi

test:
	@tools/test.sh

lint galaxy sanity unit integration molecule:
	@tools/test.sh $@

bench:
	@bench/lab.sh

bench-db:
	@bench/db_check.sh

bench-sacctmgr:
	@bench/sacctmgr.sh

bench-exporter: deps
	@.venv/bin/python bench/slurm_exporter.py

bench-exporter-lab:
	@bench/slurm_exporter_lab.sh

bench-page:
	@bench/page_time.sh

bench-verify:
	@bench/verify.sh

bench-scale:
	@bench/scale.sh 12
	@bench/scale.sh 48

build: deps
	@$(VENV)/ansible-galaxy collection build --force .

clean:
	rm -rf .cache gpuhpc-slurm-*.tar.gz
