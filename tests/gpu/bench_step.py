"""ms/step of a conv-net training loop, for the overhead A/B in tests/gpu/run.sh.
   python3 bench_step.py torch|jax STEPS  -> prints 'median_ms X steps N seconds S'
8 conv layers (as in the field-notes measurement of CUDNN_LOGLEVEL_DBG=3)."""
import os, sys, time, statistics
fw, steps = sys.argv[1], int(sys.argv[2])
warm = 10
if fw == "torch":
    import torch
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    layers = []
    c = 3
    for i in range(8):
        layers += [torch.nn.Conv2d(c, 64, 3, padding=1), torch.nn.ReLU()]
        c = 64
    model = torch.nn.Sequential(*layers, torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                torch.nn.Linear(64, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(32, 3, 64, 64, device="cuda")
    t = torch.randint(0, 10, (32,), device="cuda")
    def step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), t).backward()
        opt.step()
        torch.cuda.synchronize()
else:
    import jax, jax.numpy as jnp
    key = jax.random.PRNGKey(0)
    ws = [jax.random.normal(key, (64, 3 if i == 0 else 64, 3, 3)) * 0.05 for i in range(8)]
    x = jax.random.normal(key, (32, 3, 64, 64))
    def loss(ws, x):
        h = x
        for w in ws:
            h = jax.nn.relu(jax.lax.conv_general_dilated(h, w, (1, 1), "SAME"))
        return jnp.mean(h * h)
    g = jax.jit(jax.value_and_grad(loss))
    state = {"ws": ws}
    def step():
        l, gr = g(state["ws"], x)
        state["ws"] = [w - 0.01 * d for w, d in zip(state["ws"], gr)]
        l.block_until_ready()
for _ in range(warm):
    step()
times = []
t0 = time.perf_counter()
for _ in range(steps):
    s = time.perf_counter()
    step()
    times.append((time.perf_counter() - s) * 1000)
total = time.perf_counter() - t0
print("median_ms %.4f steps %d seconds %.3f" % (statistics.median(times), steps, total))
