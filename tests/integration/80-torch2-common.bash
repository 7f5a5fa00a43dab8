# Shared by the torch 2.x tests 80-84 (TESTS, area torch2; sourced, not a test itself),
# built on lib/assert.bash.
. "$(dirname "${BASH_SOURCE[0]}")/lib/assert.bash"
# Needs XMEM_VENV (the project venv, `make deps`) with torch; skips (77) without it.
venv=${XMEM_VENV:-}
[ -n "$venv" ] && "$venv/bin/python" -c 'import torch' 2>/dev/null ||
    { echo "no venv with torch (XMEM_VENV=$venv; make deps)"; exit 77; }
venv_torch=$("$venv/bin/python" -c 'import torch; print(torch.__version__)')

# write_mlp FILE: Linear(16, 32) + ReLU + Linear(32, 4) on "cuda", fp32 (weights 2048 and 512
# bytes, biases 128 and 16), four SGD steps. SGD without foreach: the shim does not stand in
# for torch.accelerator yet, which foreach optimizers ask on torch 2.x.
write_mlp() {
    cat >"$1" <<'PY'
import torch
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1, foreach=False)
for _ in range(4):
    opt.zero_grad()
    model(torch.randn(8, 16, device="cuda")).square().mean().backward()
    opt.step()
PY
}
