"""wick.torch.register_module in process: the disk tier for parameters that
match the safetensors checkpoint, the RAM tier otherwise, evict frees the
memory, restore brings it back bit-exact at the same address, tied
parameters stay tied; weights_pool refused on this torch with the version."""
import os
import tempfile

import wicktest

torch = wicktest.require_torch()
import wick  # noqa: E402
import wick.torch  # noqa: E402
from wick._torch_weights import save_checkpoint  # noqa: E402


class Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(64, 32)
        self.proj = torch.nn.Linear(32, 32)
        self.head = torch.nn.Linear(32, 64, bias=False)
        self.head.weight = self.embed.weight  # tied

    def forward(self, ids):
        return self.head(torch.relu(self.proj(self.embed(ids))))


def snapshot(module):
    return {n: p.detach().clone() for n, p in module.named_parameters()}


def test_evict_restore_bit_exact_tied():
    torch.manual_seed(1)
    model = Tied()
    tmp = tempfile.mkdtemp()
    ckpt = os.path.join(tmp, "w.safetensors")
    with wick.Session("weights.infer", phase="infer", jsonl_path=os.path.join(tmp, "t.jsonl")) as s:
        save_checkpoint(ckpt, model)
        with torch.no_grad():  # proj drifts from the checkpoint: RAM tier
            model.proj.weight.add_(1.0)
        before = snapshot(model)
        reg = wick.torch.register_module(s, "model", model, checkpoint=ckpt)
        assert model.head.weight.data_ptr() == model.embed.weight.data_ptr(), "tied parameters untied"
        for n, p in model.named_parameters():
            assert torch.equal(p, before[n]), n
        ptrs = {n: p.data_ptr() for n, p in model.named_parameters()}
        ids = torch.arange(16)
        out_before = model(ids)
        stats = reg.evict()
        assert stats["freed_bytes"] > 0 and not stats["resident"], stats
        assert stats["disk"] >= 2 and stats["ram"] >= 1, stats  # proj.weight drifted
        infos = {i["name"]: i for i in reg.param_info()}
        assert infos["proj.weight"]["place"] == "ram" and infos["proj.weight"]["reason"], infos["proj.weight"]
        assert infos["embed.weight"]["place"] == "disk" and infos["embed.weight"]["key"] == "embed.weight", infos["embed.weight"]
        assert infos["head.weight"]["tied"], infos["head.weight"]
        assert not reg.is_resident()
        stats = reg.restore()
        assert stats["resident"] and stats["restored_bytes"] > 0, stats
        assert {n: p.data_ptr() for n, p in model.named_parameters()} == ptrs, "restore moved a parameter"
        for n, p in model.named_parameters():
            assert torch.equal(p, before[n]), "%s is not bit-exact after restore" % n
        assert model.head.weight.data_ptr() == model.embed.weight.data_ptr()
        assert torch.equal(model(ids), out_before)
        # RAM tier for everything
        stats = reg.evict("ram")
        assert stats["ram"] == stats["parameters"] or stats["disk"] == 0, stats
        reg.restore()
        for n, p in model.named_parameters():
            assert torch.equal(p, before[n]), n
        # a forward while evicted: when_evicted="wait" would block; "restore" brings it back
        reg.when_evicted = "restore"
        reg.evict()
        assert torch.equal(model(ids), out_before)
        assert reg.is_resident()


def _parameter_bytes_live(records):
    """The most bytes of category parameter live at once in the trace."""
    live, peak, sizes = 0, 0, {}
    for r in sorted((r for r in records if r["kind"] == "memory"), key=lambda r: r["timestamp_ns"]):
        if r.get("category") != "parameter":
            continue
        key = (r["device"], r["storage_id"])
        if r["action"] == "alloc" and key not in sizes:
            sizes[key] = r["bytes"]
            live += r["bytes"]
        elif r["action"] == "free" and key in sizes:
            live -= sizes.pop(key)
        peak = max(peak, live)
    return peak


def test_instrumented_moves_ride_on_memory():
    """An instrumented model's registered module counts its
    parameters once (the store's memory records replace the tracker's), its
    eviction and restore ride on the memory records of the storages they move,
    and the trace checks clean -- registered before and after instrument()."""
    for register_first in (False, True):
        torch.manual_seed(2)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
        nbytes = sum(p.numel() * p.element_size() for p in model.parameters())
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, "t.jsonl")
        with wick.Session("weights.infer", phase="infer", jsonl_path=path) as s:
            if register_first:
                reg = wick.torch.register_module(s, "model", model)
                inst = wick.torch.instrument(s, model)
            else:
                inst = wick.torch.instrument(s, model)
                reg = wick.torch.register_module(s, "model", model)
            with inst.step():
                model(torch.ones(2, 16))
            reg.evict("ram")
            reg.restore()
            with inst.step():
                model(torch.ones(2, 16))
        records = wicktest.read_records(path)
        peak = _parameter_bytes_live(records)
        assert peak == nbytes, (register_first, peak, nbytes)
        moves = [r for r in records if any(w["kind"].startswith("wick_weight_") for w in r.get("wick_records", []))]
        assert [m["kind"] for m in moves] == ["memory"] * len(moves) and len(moves) == 2, moves
        evict, restore = moves
        assert evict["action"] == "free" and evict["storage_id"].startswith("weights:model:"), evict
        assert evict["wick_records"][0]["kind"] == "wick_weight_evict", evict
        assert restore["action"] == "alloc" and restore["wick_records"][0]["kind"] == "wick_weight_restore", restore
        verdict = wicktest.check_trace(path)
        assert not wicktest.health_errors(verdict), verdict["health"]
        assert not [h for h in verdict["health"] if h["code"] == "retained_allocations"], verdict["health"]


def test_refusals():
    with wick.Session("weights.infer", phase="infer") as s:
        e = None
        try:
            wick.torch.register_module(s, "empty", torch.nn.ReLU())
        except wick.Error as err:
            e = err
        assert e is not None and "has no parameters" in str(e), e
        try:
            wick.torch.register_module(s, 3, torch.nn.Linear(2, 2))
            raise AssertionError("name 3 accepted")
        except TypeError as err:
            assert "name must be a str" in str(err)
        lin = torch.nn.Linear(2, 2)
        wick.torch.register_module(s, "lin", lin)
        try:
            wick.torch.register_module(s, "lin2", lin)
            raise AssertionError("registered twice")
        except wick.Error as err:
            assert "already registered as 'lin'" in str(err), err
        try:
            s._s.weights_evict("nope")
            raise AssertionError("evicted an unknown module")
        except wick.Error as err:
            assert "nope" in str(err), err
        if wick.torch.torch_version() < (2, 5):
            try:
                with wick.torch.weights_pool(s):
                    pass
                raise AssertionError("weights_pool accepted on torch %s" % torch.__version__)
            except wick.Error as err:
                assert "needs torch >= 2.5" in str(err) and torch.__version__ in str(err), err


if __name__ == "__main__":
    wicktest.run_tests(globals())
