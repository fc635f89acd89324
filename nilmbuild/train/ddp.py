"""Multi-process training: DistributedDataParallel + DistributedSampler; rank 0 validates, logs and saves.

    torchrun --nproc_per_node=2 -m nilmbuild.train.ddp --source synthetic --epochs 4
    torchrun --nproc_per_node=2 --no-python nilmbuild train --ddp ...   (the same)

Backend: nccl when CUDA is available, gloo otherwise (CPU). --batch-size is per process.
PCGrad under DDP: each rank applies PCGrad to its own per-device gradients (the forward runs under
DDP's no_sync()), then the projected gradients are averaged over ranks with all_reduce before the
optimizer step. This is PCGrad per rank before the all-reduce (not PCGrad on the global-batch gradients);
with --no-pcgrad the ordinary DDP backward all-reduce is used.

Every torch.distributed call lives here: `ProcessGroup` is what the Trainer is handed under DDP (the
single-process default is `trainer.SingleProcess`, the same methods doing nothing).
"""

from __future__ import annotations

import os
import sys
from contextlib import nullcontext

import click
import torch

from nilmbuild.errors import UserError

from .options import TRAIN_HELP, config_from_options, train_options
from .trainer import Interrupted, TrainConfig, train


class ProcessGroup:
    """The initialised default process group, seen from this rank."""

    def __init__(self) -> None:
        import torch.distributed as dist

        self.dist = dist
        self.rank, self.world = dist.get_rank(), dist.get_world_size()

    def wrap(self, model):
        from torch.nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model)

    def no_sync(self, net, pcgrad: bool):
        """PCGrad projects each rank's own gradients, so its backward must not all-reduce."""
        return net.no_sync() if pcgrad else nullcontext()

    def after_backward(self, model, pcgrad: bool) -> None:
        """After a PCGrad backward: average the projected gradients over the ranks."""
        if not pcgrad:
            return
        for p in model.parameters():
            if p.grad is not None:
                self.dist.all_reduce(p.grad)
                p.grad /= self.world

    def finish(self, model) -> None:
        """BatchNorm running stats: every rank ends with rank 0's."""
        for buf in model.buffers():
            self.dist.broadcast(buf, 0)


def in_torchrun() -> bool:
    return all(k in os.environ for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"))


def init_from_env(backend: str | None = None) -> tuple[int, int]:
    import torch.distributed as dist

    if not dist.is_initialized():
        backend = backend or ("nccl" if torch.cuda.is_available() else "gloo")
        dist.init_process_group(backend=backend)
    return dist.get_rank(), dist.get_world_size()


def shutdown() -> None:
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


def _quiet(*a, **k) -> None:
    pass


def run_torchrun(tc: TrainConfig, log=print) -> dict:
    """Train as one rank of a torchrun launch (joins the process group from the environment, rank 0 logs)."""
    if not in_torchrun():
        raise UserError("--ddp needs the torchrun environment: torchrun --nproc_per_node=N -m nilmbuild.train.ddp ...")
    rank, _ = init_from_env()
    try:
        return train(tc, log=log if rank == 0 else _quiet, group=ProcessGroup())
    finally:
        shutdown()


def _spawn_worker(rank: int, world: int, port: int, tc, result_dir: str) -> None:
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        res = train(tc, log=(print if rank == 0 else _quiet), group=ProcessGroup())
        torch.save(
            {k: v.detach().clone() for k, v in res["model"].state_dict().items()},
            os.path.join(result_dir, f"rank{rank}.pt"),
        )
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    """A TCP port nothing listens on now (the OS picks it), so two runs on one machine never collide."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spawn_local(tc, world: int, result_dir: str, port: int | None = None) -> None:
    """Run `train(tc)` in `world` CPU processes (gloo) on this machine; each rank saves its final
    state_dict to result_dir/rank{r}.pt (used by the tests)."""
    import torch.multiprocessing as mp

    mp.spawn(_spawn_worker, args=(world, port or free_port(), tc, result_dir), nprocs=world, join=True)


@click.command(help=TRAIN_HELP)
@train_options
def _command(**options) -> None:
    """`python -m nilmbuild.train.ddp`: the flags of `nilmbuild train`, always distributed (--ddp is implied)."""
    try:
        run_torchrun(config_from_options(**options), log=click.echo)
    except Interrupted:
        sys.exit(130)


def main(argv=None) -> None:
    _command.main(
        args=list(sys.argv[1:] if argv is None else argv), prog_name="nilmbuild.train.ddp", standalone_mode=True
    )


if __name__ == "__main__":
    main()
