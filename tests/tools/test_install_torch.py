"""tools/install_torch.py: Linux without an NVIDIA GPU gets the CPU build from PyTorch's CPU
index (or local wheels, never silently the CUDA build); a GPU, macOS and Windows get PyPI's."""
import http.server
import os
import re
import threading
from pathlib import Path

import pytest

from tools import install_torch

ROOT = Path(__file__).resolve().parents[2]


def test_torch_requirement_is_read_from_requirements_txt(tmp_path):
    text = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    assert install_torch.torch_requirement() in [line.split("#")[0].strip()
                                                 for line in text.splitlines()]
    other = tmp_path / "requirements.txt"
    other.write_text("# torch comes below\ntorchvision>=0.1   # not this one\n"
                     "torch>=2.2,<3  # this\n", encoding="utf-8")
    assert install_torch.torch_requirement(other) == "torch>=2.2,<3"
    other.write_text("numpy\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="no torch line"):
        install_torch.torch_requirement(other)


@pytest.mark.parametrize("system, gpu, build", [
    ("Linux", False, "cpu"), ("Linux", True, "pypi"), ("Darwin", False, "pypi"),
    ("Windows", False, "pypi"), ("Windows", True, "pypi")])
def test_auto_chooses_the_build_by_platform_and_gpu_and_an_explicit_build_wins(
        monkeypatch, system, gpu, build):
    monkeypatch.setattr(install_torch.platform, "system", lambda: system)
    monkeypatch.setattr(install_torch, "nvidia_gpu", lambda: gpu)
    assert install_torch.choose_build("auto")[0] == build
    assert install_torch.choose_build("cpu") == ("cpu", "asked for with --build cpu")
    assert install_torch.choose_build("pypi")[0] == "pypi"


def _fake_nvidia_smi(folder: Path, output: str) -> None:
    smi = folder / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho '{output}'\n", encoding="utf-8")
    smi.chmod(0o755)


@pytest.mark.skipif(os.name != "posix" or Path("/proc/driver/nvidia/version").exists(),
                    reason="needs a POSIX shell and no real NVIDIA driver")
def test_nvidia_gpu_is_found_through_nvidia_smi(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert install_torch.nvidia_gpu() is False            # no nvidia-smi at all
    _fake_nvidia_smi(tmp_path, "No devices were found")
    assert install_torch.nvidia_gpu() is False            # the tool, but no GPU
    _fake_nvidia_smi(tmp_path, "GPU 0: NVIDIA H200 (UUID: GPU-0)")
    assert install_torch.nvidia_gpu() is True


def _run_main(monkeypatch, reachable, rc=0, argv=()):
    calls = []
    monkeypatch.setattr(install_torch.platform, "system", lambda: "Linux")
    monkeypatch.setattr(install_torch, "nvidia_gpu", lambda: False)
    why = "" if reachable else "Name or service not known"
    monkeypatch.setattr(install_torch, "reachable", lambda url: (reachable, why))
    monkeypatch.setattr(install_torch, "pip_install", lambda args: calls.append(args) or rc)
    return install_torch.main(list(argv)), calls


def test_cpu_build_comes_from_the_cpu_index_with_the_constraints(monkeypatch):
    status, calls = _run_main(monkeypatch, reachable=True)
    assert status == 0 and calls == [["--no-deps", *install_torch.PIP_NETWORK, "--index-url",
                                      install_torch.CPU_INDEX, install_torch.torch_requirement()]]
    _, calls = _run_main(monkeypatch, reachable=True, argv=["--constraint", "constraints.txt"])
    assert calls[0][-2:] == ["--constraint", "constraints.txt"]


def test_unreachable_index_falls_back_to_local_wheels_only(monkeypatch, capsys):
    status, calls = _run_main(monkeypatch, reachable=False)
    assert status == 0
    assert calls == [["--no-deps", "--no-index", install_torch.torch_requirement()]]
    assert "cannot be reached (Name or service not known)" in capsys.readouterr().out


def test_no_cpu_build_anywhere_stops_with_what_to_do(monkeypatch, capsys):
    status, calls = _run_main(monkeypatch, reachable=False, rc=1)
    assert status == 1 and len(calls) == 1
    err = capsys.readouterr().err
    assert "could not install the CPU build" in err and "make setup TORCH=pypi" in err


def test_pypi_build_installs_nothing_here(monkeypatch, capsys):
    monkeypatch.setattr(install_torch, "pip_install", lambda args: pytest.fail("pip must not run"))
    assert install_torch.main(["--build", "pypi"]) == 0
    assert "torch comes from PyPI with the other requirements" in capsys.readouterr().out


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_HEAD(self):
        self.send_response(200 if self.path == "/whl/cpu/" else 403)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_reachable_answers_quickly_either_way():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        assert install_torch.reachable(base + "/whl/cpu") == (True, "")
        assert install_torch.reachable(base + "/forbidden")[0] is True   # the server answered
    finally:
        server.shutdown()
        server.server_close()
    ok, why = install_torch.reachable(base + "/whl/cpu", timeout=5)   # nobody listens now
    assert ok is False and why


def test_setup_installs_the_torch_build_before_the_other_requirements():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile[makefile.index("$(STAMP):"):]
    recipe = recipe[:recipe.index("\n\n")]
    steps = [line.strip() for line in recipe.splitlines()[1:]]
    torch_step = next(i for i, s in enumerate(steps) if "tools/install_torch.py" in s)
    requirements_step = next(i for i, s in enumerate(steps)
                             if re.search(r"pip install -r requirements.txt", s))
    assert torch_step < requirements_step
    assert "--build $(TORCH)" in steps[torch_step]
