"""Multi-process training: DistributedDataParallel + DistributedSampler; rank 0 validates, logs and saves.

    torchrun --nproc_per_node=2 -m nilmbuild.train.ddp --source synthetic --epochs 4
    torchrun --nproc_per_node=2 --no-python nilmbuild train --ddp ...   (the same)

Backend: nccl when CUDA is available, gloo otherwise (CPU). --batch-size is per process.
PCGrad under DDP: each rank applies PCGrad to its own per-device gradients (the forward runs under
DDP's no_sync()), then the projected gradients are averaged over ranks with all_reduce before the
optimizer step. This is PCGrad per rank before the all-reduce (not PCGrad on the global-batch gradients);
with --no-pcgrad the ordinary DDP backward all-reduce is used.
"""

from __future__ import annotations

import os
import sys

import torch


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


def _spawn_worker(rank: int, world: int, port: int, tc, result_dir: str) -> None:
    import torch.distributed as dist

    from .trainer import train
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        res = train(tc, log=(print if rank == 0 else (lambda *a, **k: None)))
        torch.save({k: v.detach().clone() for k, v in res["model"].state_dict().items()},
                   os.path.join(result_dir, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def spawn_local(tc, world: int, result_dir: str, port: int = 29533) -> None:
    """Run `train(tc)` in `world` CPU processes (gloo) on this machine; each rank saves its final
    state_dict to result_dir/rank{r}.pt (used by the tests)."""
    import torch.multiprocessing as mp
    mp.spawn(_spawn_worker, args=(world, port, tc, result_dir), nprocs=world, join=True)


def main(argv=None) -> None:
    from .cli import train as train_cmd
    args = list(sys.argv[1:] if argv is None else argv)
    if "--ddp" not in args:
        args.append("--ddp")
    train_cmd.main(args=args, prog_name="nilmbuild.train.ddp", standalone_mode=True)


if __name__ == "__main__":
    main()
