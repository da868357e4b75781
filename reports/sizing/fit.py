"""Does it fit: usable memory, placement of weights/KV on GPUs and system RAM, verdict.

Usable memory (seed pages, /work/shared/docs/seed-arithmetic.md): the catalog's nominal memory figure is taken
as GiB and multiplied by the usable factor, 0.95 for discrete GPUs and accelerators and 0.78 for unified memory
(256 → 243.2 GiB; 128 → 99.8 GiB). Utilization = required / (count × nominal as GiB), as on the seed pages.

Verdicts: "exceeds" when the largest GPU's need is above its usable memory; "tight" when it fits with less than
``TIGHT_BUFFER`` (8 %) of usable memory to spare; "unified" when it fits on a unified-memory machine (GPU and CPU
share one pool: it runs, bandwidth-limited); otherwise "fits".

Placement (what lives where):

* llama.cpp (``src/llama-model.cpp`` ``llama_model::load_tensors``; see parallelism.py): the input embedding is
  always in system RAM; blocks and the output head go to the GPUs by ``-ngl``; each block's KV cache sits with its
  block (``offload_kqv``, default on). When the model does not fit, what a user (or llama.cpp's ``--fit``,
  ``common/fit.cpp``, which moves MoE experts to the CPU before whole layers) would do is computed: for MoE models
  the routed experts of the first N blocks go to RAM (``--n-cpu-moe N``: "keep the MoE weights of the first N
  layers in the CPU"), attention and shared experts stay on the GPU; if that is not enough, whole blocks leave the
  GPU (``-ngl`` = the blocks that fit; the output head is the last slot, so it is on the GPU only with every
  block). ``--offload-pct`` moves that share of the weights the same way, rounded up to whole layers so that the
  launch command's flags make it: routed experts of the first layers first, then -ngl's slots. Without layer
  shapes the share is moved continuously (-ngl unknown).
* vLLM tensor parallel: no automatic offload (vLLM refuses to start); ``--offload-pct`` maps to
  ``--cpu-offload-gb`` (that share of each rank's weights in pinned host memory, streamed every forward pass).
* Unified memory: one pool, no offload split; the host-side pieces count against the same pool.
"""

from __future__ import annotations

import math
from itertools import groupby

from dataclasses import dataclass, replace
from typing import Literal

from .errors import SizingError
from .parallelism import LlamaCppLayout, assign_slots, tensor_split_points
from .specs import HardwareSpec

GIB = 2**30
# Usable share of nominal memory when the catalog gives none (seed pages: 0.95 for discrete GPUs and accelerators,
# 0.78 for unified memory, where the OS and other programs share the pool; seed-arithmetic.md: 256 → 243.2 GiB,
# 128 → 99.8 GiB). The catalog's admin help text and the custom-hardware form name the same defaults.
DEFAULT_USABLE_FACTOR = {"discrete": 0.95, "accelerator": 0.95, "unified": 0.78}
# "tight headroom (<8 % buffer)" on the seed pages.
TIGHT_BUFFER = 0.08

Verdict = Literal["fits", "tight", "unified", "exceeds"]
OffloadMode = Literal["none", "auto", "explicit"]


def usable_factor(hardware: HardwareSpec) -> float:
    return hardware.usable_memory_factor or DEFAULT_USABLE_FACTOR[hardware.kind]


def nominal_bytes(hardware: HardwareSpec) -> float:
    """One accelerator's memory, the printed figure read as GiB (seed convention)."""
    return hardware.memory_gb * GIB


def usable_bytes(hardware: HardwareSpec) -> float:
    return nominal_bytes(hardware) * usable_factor(hardware)


def verdict_for(need_per_gpu: float, usable_per_gpu: float, *, unified: bool) -> Verdict:
    if need_per_gpu > usable_per_gpu:
        return "exceeds"
    if usable_per_gpu - need_per_gpu < TIGHT_BUFFER * usable_per_gpu:
        return "tight"
    return "unified" if unified else "fits"


@dataclass(frozen=True)
class Placement:
    """Where the scenario's bytes live. Offloaded bytes are what did not fit (or --offload-pct moved)."""

    engine: str
    mode: OffloadMode
    demand_per_gpu: tuple[float, ...]  # each GPU's need before automatic offload (after --offload-pct)
    device_bytes: tuple[float, ...]  # each GPU's bytes as placed
    host_bytes: float  # system RAM the engine uses by design (llama.cpp embedding, host buffers)
    offloaded_dense_bytes: float  # non-expert weights in system RAM (read in full per token)
    offloaded_expert_bytes: float  # routed experts in system RAM (k/E of them read per token)
    offloaded_kv_bytes: float  # KV cache of blocks computed on the CPU
    gpu_layers: int | None = None  # llama.cpp -ngl (blocks + output slot on the GPUs)
    n_cpu_moe: int | None = None  # llama.cpp --n-cpu-moe
    explanation: str = ""
    # llama.cpp -ts as slot counts per GPU when the placement chose the split (None: an even -ts 1,1,…)
    tensor_split: tuple[int, ...] | None = None

    @property
    def per_gpu_bytes(self) -> float:
        return max(self.device_bytes, default=0.0)

    @property
    def automatic_offload(self) -> bool:
        """Whether automatic offload moved bytes the GPUs could not hold to system RAM."""
        return self.mode == "auto" and self.offloaded_bytes > 0

    @property
    def placed_on_gpus_bytes(self) -> float:
        """What the GPUs hold after automatic offload (Σ device_bytes)."""
        return sum(self.device_bytes)

    @property
    def offloaded_weight_bytes(self) -> float:
        return self.offloaded_dense_bytes + self.offloaded_expert_bytes

    @property
    def offloaded_bytes(self) -> float:
        return self.offloaded_weight_bytes + self.offloaded_kv_bytes


@dataclass(frozen=True)
class FitResult:
    verdict: Verdict
    gpus: int
    nominal_bytes_per_gpu: float
    usable_bytes_per_gpu: float
    required_bytes: float  # weights + KV + runtime, all GPUs and host-side pieces
    headroom_bytes: float  # the fullest GPU's usable − demand (negative: what it lacks), as the verdict judges it
    utilization_pct: float
    placement: Placement

    @property
    def fits(self) -> bool:
        return self.verdict != "exceeds"

    @property
    def gpu_demand_bytes(self) -> float:
        """What the GPUs must hold (Σ demand_per_gpu, before automatic offload): the verdict and headroom compare
        this, not required_bytes, with the usable memory."""
        return sum(self.placement.demand_per_gpu)

    @property
    def gpu_utilization_pct(self) -> float:
        """What the GPUs hold before automatic offload, as a share of their memory; utilization_pct (the contract's)
        also counts what stays in system RAM: 42.68 GiB with half of Llama 3.3 70B's weights offloaded is 178 % of
        one 24 GB card, of which the card holds 20.92 GiB, 87 %."""
        return self.gpu_demand_bytes / (self.gpus * self.nominal_bytes_per_gpu) * 100

    @property
    def fullest_gpu_demand_bytes(self) -> float:
        """What the fullest GPU must hold before automatic offload (usable − headroom)."""
        return max(self.placement.demand_per_gpu, default=0.0)

    @property
    def system_ram_bytes(self) -> float:
        """What stays in system RAM by design or by --offload-pct (llama.cpp keeps the input embedding and its host
        buffers there, llama-model.cpp/llama-context.cpp); automatic offload is not included (it is what the GPUs
        could not hold). Taken from the placement, not as required − demand: under vLLM the demand holds one
        sequence's KV and required all of --batch (the rest wait in its queue), which is no system RAM."""
        placement = self.placement
        return placement.host_bytes + (placement.offloaded_bytes if placement.mode == "explicit" else 0.0)


def assess_fit(placement: Placement, *, required_bytes: float, hardware: HardwareSpec, gpus: int,
               usable_per_gpu: float | None = None) -> FitResult:
    """Verdict on the largest GPU's demand; utilization on ``required_bytes`` (contract formula)."""
    usable = usable_bytes(hardware) if usable_per_gpu is None else usable_per_gpu
    nominal = nominal_bytes(hardware)
    need = max(placement.demand_per_gpu, default=0.0)
    return FitResult(
        verdict=verdict_for(need, usable, unified=hardware.kind == "unified"),
        gpus=gpus,
        nominal_bytes_per_gpu=nominal,
        usable_bytes_per_gpu=usable,
        required_bytes=required_bytes,
        # The verdict judges the fullest GPU, so the headroom is that GPU's: a sum over GPUs read "+0.21 GiB" beside
        # "exceeds" when a layer split left one GPU 1.2 GiB over and the other 1.4 GiB under (gpt-oss-120b, 2 × RTX
        # 5090, 32K). With one GPU, or an even split, it is the seed's usable − required.
        headroom_bytes=usable - need,
        utilization_pct=required_bytes / (gpus * nominal) * 100,
        placement=placement,
    )


def check_offload_pct(offload_pct: float | None) -> None:
    if offload_pct is not None and not 0 <= offload_pct <= 100:
        raise SizingError(f"--offload-pct must be between 0 and 100 (got {offload_pct})")


# --------------------------------------------------------------------------------------------------------------
# llama.cpp
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LlamaCppDemand:
    layout: LlamaCppLayout
    kv_per_block: tuple[float, ...]  # KV (and recurrent state) bytes each block holds
    device_fixed_bytes: float  # compute buffer + device context, on every GPU
    host_buffer_bytes: float  # host compute + output buffers


@dataclass
class _Loads:
    """Running totals while placing blocks (mutable scratch)."""

    device: list[float]
    dense: float
    experts: float
    kv: float


def _on_gpu_bytes(block, kv: float, *, experts_moved: bool) -> float:
    """What a block on a GPU puts there: its weights and KV, without its routed experts when --n-cpu-moe moved them."""
    return block.other_bytes + kv + (0.0 if experts_moved else block.expert_bytes)


def _loads(demand: LlamaCppDemand, devices: tuple[int | None, ...], n_cpu_moe: int, gpus: int,
           shares: tuple[float, ...] | None = None) -> _Loads:
    layout = demand.layout
    if layout.estimated:
        return _estimated_loads(demand, devices, n_cpu_moe, gpus, shares)
    # llama.cpp assigns blocks to devices in contiguous runs (assign_slots): the sums run over slices of each run,
    # not block by block (a plan places its blocks ~5 times on average, 9,895 calls for 2,000 random Qwen3-30B
    # plans on an RTX 4090, more while searching --n-cpu-moe and -ngl).
    loads = _Loads([demand.device_fixed_bytes] * gpus, 0.0, 0.0, 0.0)
    other, experts, kv = layout.other_bytes_by_block, layout.expert_bytes_by_block, demand.kv_per_block
    start = 0
    for device, run in groupby(devices[:len(other)]):
        end = start + len(list(run))
        moved_end = min(max(n_cpu_moe, start), end)  # blocks start…moved_end have their experts in system RAM
        moved = sum(experts[start:moved_end])
        if device is None:
            loads.dense += sum(other[start:end])
            loads.experts += sum(experts[start:end])
            loads.kv += sum(kv[start:end])
        else:
            loads.device[device] += sum(other[start:end]) + sum(kv[start:end]) + sum(experts[moved_end:end])
            loads.experts += moved
        start = end
    _place_output(loads, layout, devices)
    return loads


def _place_output(loads: _Loads, layout: LlamaCppLayout, devices: tuple[int | None, ...]) -> None:
    output_device = devices[len(layout.blocks)]
    if output_device is not None:
        loads.device[output_device] += layout.output_bytes
    elif not layout.output_is_tied_copy:
        loads.dense += layout.output_bytes  # a tied head on the CPU is the mmapped embedding itself


def _estimated_loads(demand: LlamaCppDemand, devices: tuple[int | None, ...], n_cpu_moe: int, gpus: int,
                     shares: tuple[float, ...] | None) -> _Loads:
    layout = demand.layout
    loads = _Loads([demand.device_fixed_bytes] * gpus, 0.0, 0.0, 0.0)
    for i, block in enumerate(layout.blocks):
        device, kv = devices[i], demand.kv_per_block[i]
        if device is None:
            loads.dense += block.other_bytes
            loads.experts += block.expert_bytes
            loads.kv += kv
            continue
        if layout.estimated:
            # One pseudo-block stands for every layer of a model without shapes: llama.cpp splits those layers
            # over the GPUs by --tensor-split, so its bytes are shared out the same way (not all on GPU 0).
            on_gpus = _on_gpu_bytes(block, kv, experts_moved=i < n_cpu_moe)
            for gpu, share in enumerate(shares or (1.0 / gpus,) * gpus):
                loads.device[gpu] += on_gpus * share
            if i < n_cpu_moe:
                loads.experts += block.expert_bytes
            continue
        loads.device[device] += _on_gpu_bytes(block, kv, experts_moved=i < n_cpu_moe)
        if i < n_cpu_moe:
            loads.experts += block.expert_bytes
    _place_output(loads, layout, devices)
    return loads


def place_llama_cpp(demand: LlamaCppDemand, *, gpus: int, usable_per_gpu: float, unified: bool,
                    offload_pct: float | None, tensor_split: tuple[float, ...] | None = None) -> Placement:
    """Place blocks on ``gpus`` GPUs (layer split) and move to RAM what does not fit (see the module doc)."""
    check_offload_pct(offload_pct)
    layout = demand.layout
    n_blocks = len(layout.blocks)
    host = layout.embedding_bytes + demand.host_buffer_bytes
    points = tensor_split_points(tensor_split or (1.0,) * gpus)
    shares = tuple(b - a for a, b in zip((0.0, *points[:-1]), points))
    all_on_gpu = assign_slots(n_blocks, n_blocks + 1, points)
    full = _loads(demand, all_on_gpu, 0, gpus, shares)
    # A layout without shapes has one pseudo-block: its slot count is not llama.cpp's layer count, so -ngl stays
    # None ("every layer": the launch command's -ngl 999) rather than the pseudo-count 2.
    every_slot = None if layout.estimated else n_blocks + 1
    if unified:
        # One pool: the host-side embedding and buffers use the same memory as the "GPU" part.
        device = tuple(load + (host if i == 0 else 0.0) for i, load in enumerate(full.device))
        return Placement("llama.cpp", "none", device, device, 0.0, 0.0, 0.0, 0.0, every_slot, 0,
                         "unified memory: one shared pool, no offload split")
    if offload_pct is not None:
        return _explicit_llama_cpp(demand, full, host, offload_pct, points, gpus)
    demand_per_gpu = tuple(full.device)
    if max(demand_per_gpu) <= usable_per_gpu:
        how = ("every layer on the GPU (-ngl 999; no layer shapes)" if layout.estimated else
               f"all {n_blocks} blocks and the output head on the GPU (-ngl {n_blocks + 1})")
        return Placement("llama.cpp", "none", demand_per_gpu, demand_per_gpu, host, 0.0, 0.0, 0.0,
                         every_slot, 0, how)
    if layout.estimated:
        return _continuous_offload(demand, full, host, usable_per_gpu, gpus)
    if gpus > 1 and tensor_split is None:
        counts = _balanced_split(_slot_loads(demand, 0), demand.device_fixed_bytes, gpus, usable_per_gpu)
        if counts is not None:  # an -ts by the layers' sizes holds everything: nothing moves to system RAM
            balanced = tuple(_loads(demand, _slots_of(counts, n_blocks), 0, gpus).device)
            return Placement("llama.cpp", "none", balanced, balanced, host, 0.0, 0.0, 0.0, every_slot, 0,
                             f"all {n_blocks} blocks and the output head on the GPUs (-ngl {n_blocks + 1}), split "
                             f"by their sizes (-ts {_ts(counts)})", counts)
        if any(block.is_moe for block in layout.blocks):
            return _auto_moe_split(demand, demand_per_gpu, host, usable_per_gpu, gpus)
    return _auto_llama_cpp(demand, demand_per_gpu, host, usable_per_gpu, gpus, points)


def layer_split_holds(demand: LlamaCppDemand, gpus: int, usable_per_gpu: float) -> bool:
    """Whether an -ts by the layers' sizes holds every slot on ``gpus`` GPUs of ``usable_per_gpu`` each: what
    place_llama_cpp tries on several GPUs when the even -ts exceeds one of them (before any automatic offload)."""
    return _fill(_slot_loads(demand, 0), demand.device_fixed_bytes, gpus, usable_per_gpu) is not None


def _slot_loads(demand: LlamaCppDemand, n_cpu_moe: int) -> list[float]:
    """Bytes each slot (block, then the output head) puts on its GPU with the routed experts of the first
    ``n_cpu_moe`` blocks in system RAM."""
    blocks = demand.layout.blocks
    return [_on_gpu_bytes(block, kv, experts_moved=i < n_cpu_moe)
            for i, (block, kv) in enumerate(zip(blocks, demand.kv_per_block))] + [demand.layout.output_bytes]


def _fill(slot_loads: list[float], fixed: float, gpus: int, capacity: float) -> tuple[int, ...] | None:
    """Slots per GPU, filling each GPU in llama.cpp's order up to ``capacity`` (its fixed buffers included);
    None when ``gpus`` GPUs cannot hold them."""
    counts: list[int] = []
    held, count = fixed, 0
    for load in slot_loads:
        if fixed + load > capacity:
            return None
        if held + load > capacity:
            counts.append(count)
            if len(counts) == gpus:
                return None
            held, count = fixed, 0
        held += load
        count += 1
    counts.append(count)
    return tuple(counts) + (0,) * (gpus - len(counts))


def _balanced_split(slot_loads: list[float], fixed: float, gpus: int, usable: float) -> tuple[int, ...] | None:
    """The -ts (slots per GPU, contiguous as llama.cpp assigns layers) whose fullest GPU holds least: bisection on
    that GPU's bytes with a greedy fill (the linear partition problem); None when no split holds the slots."""
    if _fill(slot_loads, fixed, gpus, usable) is None:
        return None
    low = max(fixed + max(slot_loads), fixed + sum(slot_loads) / gpus)
    high = usable
    for _ in range(40):  # bytes: 40 halvings of at most the GPU's memory leave less than a kilobyte
        middle = (low + high) / 2
        if _fill(slot_loads, fixed, gpus, middle) is None:
            low = middle
        else:
            high = middle
    return _fill(slot_loads, fixed, gpus, high)


def _slots_of(counts: tuple[int, ...], n_blocks: int) -> tuple[int | None, ...]:
    """The device of each slot under -ts counts (assign_slots reproduces the counts exactly: slot i goes to the
    first device whose cumulative share exceeds i / (n_blocks + 1))."""
    return assign_slots(n_blocks, n_blocks + 1, tensor_split_points(tuple(float(c) for c in counts)))


def _ts(counts: tuple[int, ...]) -> str:
    return ",".join(str(count) for count in counts)


def _auto_moe_split(demand: LlamaCppDemand, demand_per_gpu: tuple[float, ...], host: float, usable: float,
                    gpus: int) -> Placement:
    """Several GPUs, routed experts: --n-cpu-moe moves the experts of the first blocks, which an even -ts puts on
    the first GPUs, so with -ts 1,1,… the last GPU decides alone and the others end up almost empty (Qwen3-235B on
    4 × RTX 3090 held ~2 GiB on three of them). The fewest blocks whose experts must move with an -ts by the
    layers' sizes, and that -ts."""
    layout, fixed = demand.layout, demand.device_fixed_bytes
    n_blocks = len(layout.blocks)
    fitting = first_true(1, n_blocks, lambda n: _fill(_slot_loads(demand, n), fixed, gpus, usable) is not None)
    if fitting is None:
        return _auto_llama_cpp(demand, demand_per_gpu, host, usable, gpus,
                               tensor_split_points((1.0,) * gpus))  # not even all experts out: whole layers move
    counts = _balanced_split(_slot_loads(demand, fitting), fixed, gpus, usable)
    loads = _loads(demand, _slots_of(counts, n_blocks), fitting, gpus)
    placement = _placed(demand_per_gpu, loads, host, n_blocks + 1, fitting,
                        f"routed experts of the first {fitting} blocks in system RAM (--n-cpu-moe {fitting}), the "
                        f"rest split by size (-ts {_ts(counts)}); attention, shared experts and KV stay on the GPUs")
    return replace(placement, tensor_split=counts)


def _fits(loads: _Loads, usable: float) -> bool:
    return max(loads.device) <= usable


def _auto_llama_cpp(demand: LlamaCppDemand, demand_per_gpu: tuple[float, ...], host: float, usable: float,
                    gpus: int, points: tuple[float, ...]) -> Placement:
    layout = demand.layout
    n_blocks = len(layout.blocks)
    all_on_gpu = assign_slots(n_blocks, n_blocks + 1, points)
    if any(block.is_moe for block in layout.blocks):
        fitting = first_true(1, n_blocks, lambda n: _fits(_loads(demand, all_on_gpu, n, gpus), usable))
        if fitting is not None:
            loads = _loads(demand, all_on_gpu, fitting, gpus)
            return _placed(demand_per_gpu, loads, host, n_blocks + 1, fitting,
                           f"routed experts of the first {fitting} blocks in system RAM (--n-cpu-moe {fitting}); "
                           "attention, shared experts and KV stay on the GPU")
        n_cpu_moe = n_blocks
    else:
        n_cpu_moe = 0

    def fits_with(layers: int) -> bool:
        return _fits(_loads(demand, assign_slots(n_blocks, layers, points), n_cpu_moe, gpus), usable)

    # -ngl counts from the top: more layers on the GPU only ever adds bytes, so the largest fitting count is the
    # last one for which fits_with holds. Search by bisection on the negated predicate.
    too_many = first_true(1, n_blocks, lambda layers: not fits_with(layers))
    gpu_layers = n_blocks if too_many is None else too_many - 1
    loads = _loads(demand, assign_slots(n_blocks, gpu_layers, points), n_cpu_moe, gpus)
    moe_note = "all routed experts and " if n_cpu_moe else ""
    how = (f"{moe_note}{n_blocks - gpu_layers} of {n_blocks} blocks (with their KV) and the output head in system "
           f"RAM (-ngl {gpu_layers}{f' --n-cpu-moe {n_cpu_moe}' if n_cpu_moe else ''})")
    if gpu_layers == 0 and not _fits(loads, usable):
        how = "even the compute buffers do not fit: everything runs from system RAM (-ngl 0)"
    return _placed(demand_per_gpu, loads, host, gpu_layers, n_cpu_moe or None, how)


def first_true(low: int, high: int, predicate) -> int | None:
    """Smallest n in [low, high] with predicate(n), for a predicate that stays true once true; None if never."""
    if low > high or not predicate(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if predicate(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _placed(demand_per_gpu: tuple[float, ...], loads: _Loads, host: float, gpu_layers: int | None,
            n_cpu_moe: int | None, how: str) -> Placement:
    return Placement("llama.cpp", "auto", demand_per_gpu, tuple(loads.device), host, loads.dense, loads.experts,
                     loads.kv, gpu_layers, n_cpu_moe, how)


def _continuous_offload(demand: LlamaCppDemand, full: _Loads, host: float, usable: float, gpus: int) -> Placement:
    """No layer shapes: move just enough weight bytes (active and idle in proportion) to RAM; -ngl unknown."""
    excess = sum(max(0.0, load - usable) for load in full.device)
    device, dense, experts, share = _move_share(demand, full, excess)
    return Placement("llama.cpp", "auto", tuple(full.device), device, host, dense, experts, 0.0, None, None,
                     f"{share:.0%} of the weights in system RAM (no layer shapes: -ngl unknown, estimated)")


def _move_share(demand: LlamaCppDemand, full: _Loads, wanted: float) -> tuple[tuple[float, ...], float, float, float]:
    """A layout without shapes (one pseudo-block): move ``wanted`` weight bytes (at most all) to RAM, the bytes a
    token reads and those it does not in proportion — the pseudo-block's "experts" are the unread bytes, not routed
    experts a token reads k/E of, so moving them first would make the offload free. Each GPU gives up weights in
    proportion to what it holds (the --tensor-split a user would pick); the fixed per-GPU buffers stay.
    Returns (device bytes, dense moved, "experts" moved, share moved)."""
    layout = demand.layout
    weights = sum(block.total_bytes for block in layout.blocks) + layout.output_bytes
    moved = min(max(wanted, 0.0), weights)
    share = moved / weights if weights else 0.0
    own = [load - demand.device_fixed_bytes for load in full.device]
    held = sum(own)
    device = tuple(load - moved * (mine / held if held else 0.0) for load, mine in zip(full.device, own))
    dense = sum(block.other_bytes for block in layout.blocks) + layout.output_bytes
    experts = sum(block.expert_bytes for block in layout.blocks)
    return device, dense * share, experts * share, share


def _explicit_llama_cpp(demand: LlamaCppDemand, full: _Loads, host: float, offload_pct: float,
                        points: tuple[float, ...], gpus: int) -> Placement:
    """--offload-pct: that share of the weights to RAM, routed experts first, then whole layers, rounded up to the
    whole tensors llama.cpp can move: the routed experts of the first k layers (--n-cpu-moe k), then -ngl's slots
    (the output head, then the first layers with their KV). The placement is the one those flags make, so the
    launch command runs what the page prices."""
    layout = demand.layout
    target = offload_pct / 100 * layout.file_bytes
    if layout.estimated:
        return _explicit_continuous(demand, full, host, offload_pct, target)
    blocks = layout.blocks
    n_blocks = len(blocks)
    experts = [block.expert_bytes for block in blocks]
    wanted_experts = min(target, sum(experts))
    n_cpu_moe = _leading_blocks_covering(experts, wanted_experts)
    rest = target - sum(experts[:n_cpu_moe])
    cpu_slots = 0
    if rest > 0 and (n_cpu_moe == n_blocks or not any(experts)):
        # Every routed expert is out (or there are none): then slots leave the GPU in -ngl's order, the output
        # head first (-ngl n keeps every block), then block 0, block 1, … (llama_model::load_tensors).
        # A tied head's GPU copy leaves too, but the weights in system RAM do not grow: the head is the embedding.
        head = 0.0 if layout.output_is_tied_copy else layout.output_bytes
        slots = [head] + [block.other_bytes for block in blocks]
        cpu_slots = _leading_blocks_covering(slots, rest)
    gpu_layers = n_blocks + 1 - cpu_slots
    loads = _loads(demand, assign_slots(n_blocks, gpu_layers, points), n_cpu_moe, gpus)
    flags = " ".join(flag for flag in (f"-ngl {gpu_layers}", f"--n-cpu-moe {n_cpu_moe}" if n_cpu_moe else "") if flag)
    how = (f"--offload-pct {offload_pct:g}: {loads.experts / GIB:.2f} GiB of routed experts and "
           f"{loads.dense / GIB:.2f} GiB of other weights in system RAM, in whole layers ({flags})")
    device = tuple(loads.device)
    return Placement("llama.cpp", "explicit", device, device, host, loads.dense, loads.experts, loads.kv,
                     gpu_layers, n_cpu_moe or None, how)


def _leading_blocks_covering(sizes: list[float], wanted: float) -> int:
    """The fewest leading entries of ``sizes`` whose sum reaches ``wanted`` (all of them if none does)."""
    if wanted <= 0:
        return 0
    total = 0.0
    for count, size in enumerate(sizes, start=1):
        total += size
        if total >= wanted:
            return count
    return len(sizes)


def _explicit_continuous(demand: LlamaCppDemand, full: _Loads, host: float, offload_pct: float,
                         target: float) -> Placement:
    """No layer shapes: no layers to move, so exactly the share, read and unread bytes in proportion."""
    device, dense, experts, _ = _move_share(demand, full, target)
    how = (f"--offload-pct {offload_pct:g}: {experts / GIB:.2f} GiB of the weights a token does not read and "
           f"{dense / GIB:.2f} GiB of those it reads in system RAM (no layer shapes: -ngl unknown, estimated)")
    return Placement("llama.cpp", "explicit", device, device, host, dense, experts, 0.0, None, None, how)


# --------------------------------------------------------------------------------------------------------------
# vLLM tensor parallel
# --------------------------------------------------------------------------------------------------------------


def vllm_cpu_offload_gib(offloaded_bytes: float, gpus: int) -> float:
    """vLLM's --cpu-offload-gb for weights moved to system RAM: GiB per GPU (EngineArgs: "The space in GiB to
    offload to CPU, per GPU"; set_cpu_offload_max_bytes(int(cpu_offload_gb * 1024**3))), rounded up to 0.1 GiB so
    that the server moves at least what the plan moves."""
    return math.ceil(offloaded_bytes / max(gpus, 1) / 2**30 * 10 - 1e-9) / 10


def place_tensor_parallel(*, per_rank_weights: float, per_rank_kv: float, per_rank_runtime: float, gpus: int,
                          unified: bool, offload_pct: float | None) -> Placement:
    """Every rank holds the same: its weights, its KV share and its runtime memory. No automatic offload."""
    check_offload_pct(offload_pct)
    moved = 0.0 if unified or offload_pct is None else offload_pct / 100 * per_rank_weights
    per_rank = per_rank_weights - moved + per_rank_kv + per_rank_runtime
    device = (per_rank,) * gpus
    mode: OffloadMode = "explicit" if moved else "none"
    how = (f"--cpu-offload-gb {vllm_cpu_offload_gib(moved, 1):g} per GPU ({offload_pct:g} % of its weights)" if moved else
           f"tensor parallel over {gpus} GPU{'s' if gpus > 1 else ''}; vLLM does not offload automatically")
    return Placement("vllm", mode, device, device, 0.0, moved * gpus, 0.0, 0.0, None, None, how)
