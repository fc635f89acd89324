import torch

from nilmbuild.train.pcgrad import pcgrad_backward, project


def test_conflicting_gradients_are_projected():
    g1, g2 = torch.tensor([1.0, 0.0]), torch.tensor([-1.0, 1.0])  # cos = -1/sqrt(2) < 0
    (p1, p2), cos, n = project([g1, g2], torch.Generator().manual_seed(0))
    assert n == 2
    assert torch.allclose(cos[0, 1], torch.tensor(-(2**-0.5)))
    # g1 - (g1.g2 / |g2|^2) g2 = [1, 0] + 0.5 [-1, 1] = [0.5, 0.5]
    assert torch.allclose(p1, torch.tensor([0.5, 0.5]))
    # g2 - (g2.g1 / |g1|^2) g1 = [-1, 1] + [1, 0] = [0, 1]
    assert torch.allclose(p2, torch.tensor([0.0, 1.0]))
    assert abs(float(p1 @ g2)) < 1e-6 and abs(float(p2 @ g1)) < 1e-6


def test_agreeing_gradients_are_unchanged():
    g1, g2 = torch.tensor([1.0, 0.0]), torch.tensor([1.0, 1.0])
    (p1, p2), cos, n = project([g1, g2])
    assert n == 0 and torch.equal(p1, g1) and torch.equal(p2, g2)
    assert cos[0, 1] > 0


def test_backward_shared_and_own_parameters():
    w = torch.nn.Parameter(torch.tensor([0.0, 0.0]))  # shared
    a, b = torch.nn.Parameter(torch.tensor(1.0)), torch.nn.Parameter(torch.tensor(1.0))  # heads
    losses = torch.stack([w @ torch.tensor([1.0, 0.0]) + 2 * a, w @ torch.tensor([-1.0, 1.0]) + 3 * b])
    cos, n = pcgrad_backward(losses, [w], [[a], [b]], torch.Generator().manual_seed(0))
    assert n == 2
    assert torch.allclose(w.grad, torch.tensor([0.5, 1.5]))
    assert a.grad.item() == 2.0 and b.grad.item() == 3.0


def test_batched_backward_equals_one_backward_per_device():
    """The single vmapped backward gives each device exactly the gradient of its own loss (checked against
    one autograd.grad per device, then the same projection)."""
    torch.manual_seed(0)
    trunk = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 6))
    heads = torch.nn.ModuleList(torch.nn.Linear(6, 1) for _ in range(3))
    x = torch.randn(5, 4)
    target = torch.randn(3, 5)

    def losses():
        h = trunk(x)
        return torch.stack([((heads[i](h)[:, 0] - target[i]) ** 2).mean() for i in range(3)])

    shared, own = list(trunk.parameters()), [list(h.parameters()) for h in heads]
    pcgrad_backward(losses(), shared, own, torch.Generator().manual_seed(1))
    got_shared = [p.grad.clone() for p in shared]
    got_own = [[p.grad.clone() for p in ps] for ps in own]

    ls = losses()
    per = [torch.autograd.grad(ls[i], shared + own[i], retain_graph=True) for i in range(3)]
    flat = [torch.cat([g.reshape(-1) for g in gi[: len(shared)]]) for gi in per]
    proj, _, _ = project(flat, torch.Generator().manual_seed(1))
    total = torch.stack(proj).sum(0)
    want = torch.split(total, [p.numel() for p in shared])
    for got, w, p in zip(got_shared, want, shared):
        assert torch.allclose(got, w.view_as(p), atol=1e-6)
    for i in range(3):
        for got, w in zip(got_own[i], per[i][len(shared) :]):
            assert torch.allclose(got, w, atol=1e-6)


def test_weakly_agreeing_and_orthogonal_gradients_are_not_projected():
    """Only a negative dot product projects: a small positive one (0.5) and an exact zero leave both unchanged
    and count no projection (mutation testing found `dot < 1` and `dot <= 0` passing the tests above)."""
    g1 = torch.tensor([1.0, 0.0])
    for g2 in (torch.tensor([0.5, 1.0]), torch.tensor([0.0, 1.0])):
        (p1, p2), _, n = project([g1, g2], torch.Generator().manual_seed(0))
        assert n == 0 and torch.equal(p1, g1) and torch.equal(p2, g2)


def test_backward_accumulates_onto_existing_grads_and_allows_unused_shared_parameters():
    w = torch.nn.Parameter(torch.tensor([0.0, 0.0]))
    unused = torch.nn.Parameter(torch.tensor([5.0]))  # shared, but no loss reaches it
    a, b = torch.nn.Parameter(torch.tensor(1.0)), torch.nn.Parameter(torch.tensor(1.0))
    w.grad, a.grad, b.grad = torch.tensor([1.0, 1.0]), torch.tensor(10.0), torch.tensor(-10.0)
    losses = torch.stack([w @ torch.tensor([1.0, 0.0]) + 2 * a, w @ torch.tensor([-1.0, 1.0]) + 3 * b])
    pcgrad_backward(losses, [w, unused], [[a], [b]], torch.Generator().manual_seed(0))
    assert torch.allclose(w.grad, torch.tensor([1.5, 2.5]))  # [1, 1] + the projected sum [0.5, 1.5]
    assert a.grad.item() == 12.0 and b.grad.item() == -7.0
    assert torch.equal(unused.grad, torch.zeros(1))
