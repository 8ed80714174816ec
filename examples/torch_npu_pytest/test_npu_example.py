"""A torch_npu test file as its user writes it, with nothing emulator-specific in it. Run it without an NPU:

    pytest --aclnn-emulator examples/torch_npu_pytest      # or: PYACLNN_EMULATE=1 pytest examples/torch_npu_pytest

(or `aclnn_emulator = true` in the project's pytest configuration). The last test starts a subprocess that
uses npu too: the emulator reaches it through PYACLNN_EMULATE, which the plugin sets."""
import subprocess
import sys

import torch
import torch.nn.functional as F


def test_arithmetic_on_npu_matches_the_cpu():
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    assert torch.equal((x.npu() * 2 + 1).cpu(), x * 2 + 1)


def test_a_linear_layer_trains_on_npu():
    torch.manual_seed(0)
    layer, x, y = torch.nn.Linear(4, 3), torch.randn(8, 4), torch.randint(0, 3, (8,))
    grads = {}
    for dev in ("cpu", "npu"):
        m = torch.nn.Linear(4, 3).to(dev)
        m.load_state_dict(layer.state_dict())
        F.cross_entropy(m(x.to(dev)), y.to(dev)).backward()
        grads[dev] = m.weight.grad.cpu()
    assert torch.allclose(grads["npu"], grads["cpu"], atol=1e-6)


def test_a_subprocess_uses_npu_too():
    code = "import torch; print((torch.ones(3, device='npu') + 1).sum().item())"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "6.0"
