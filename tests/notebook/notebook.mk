# tests/notebook/notebook.mk - `make test-notebook` (included by the top Makefile):
# tests/notebook/t_notebook.sh with real Jupyter from PyPI in a venv of its own
# (NB_VENV=/path reuses one).  convguard goes into it from the wheel when one is
# built (make wheel / test-wheel: what CI runs first), else the source tree's
# package is used (PYTHONPATH=python, the command from build/).
NB_VENV ?= $(BUILD)/nbvenv
NB_REQS := ipykernel jupyter_client nbconvert nbformat papermill
NB_WHEEL = $(firstword $(wildcard dist/convguard-$(VERSION)-*x86_64.whl))
.PHONY: test-notebook
$(NB_VENV)/.done:
	python3 -m venv $(NB_VENV)
	$(NB_VENV)/bin/pip install -q --disable-pip-version-check $(NB_REQS)
	touch $@
test-notebook: all $(NB_VENV)/.done
	@if [ -n "$(NB_WHEEL)" ]; then \
	    echo "test-notebook: convguard from $(NB_WHEEL)"; \
	    $(NB_VENV)/bin/pip install -q --disable-pip-version-check --force-reinstall --no-deps $(NB_WHEEL) && \
	    env -u PYTHONPATH -u CONVGUARD_BIN VENV=$(abspath $(NB_VENV)) tests/notebook/t_notebook.sh; \
	else \
	    echo "test-notebook: convguard from the source tree (no wheel in dist/)"; \
	    $(NB_VENV)/bin/pip uninstall -q -y convguard >/dev/null 2>&1; \
	    PYTHONPATH=$(CURDIR)/python CONVGUARD_BIN=$(CURDIR)/$(BUILD)/convguard VENV=$(abspath $(NB_VENV)) \
	        tests/notebook/t_notebook.sh; \
	fi
