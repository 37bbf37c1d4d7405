"""Running graphs in worker processes (spawned: CUDA does not survive fork).

Each worker makes the implementations once and evaluates graphs from a shared queue. A worker
that dies (a crash inside cuDNN, a poisoned CUDA context) or overruns the per-graph timeout is
replaced; its graph is reported as an error naming what happened, and the run goes on."""
import multiprocessing as mp
import queue
import time


def _worker(target, want_frontend, tasks, results, wid):
    try:
        from . import case as case_mod
        from .impls import describe_versions, make
        impls, skipped = make(target, want_frontend)
        results.put(("ready", wid, describe_versions(impls), skipped))
    except Exception as e:  # noqa: BLE001 - reported to the parent, which stops
        results.put(("fatal", wid, f"{type(e).__name__}: {e}"))
        return
    while True:
        item = tasks.get()
        if item is None:
            return
        index, family, seed = item
        results.put(("start", wid, index))
        res = case_mod.evaluate(case_mod.make(family, seed), impls, skipped, target)
        res["index"] = index
        results.put(("done", wid, index, res))
        if target == "gpu" and not _healthy():
            results.put(("sick", wid, index))
            return


def _healthy():
    import torch
    try:
        torch.cuda.synchronize()
        return True
    except Exception:  # noqa: BLE001 - a poisoned context: this worker stops
        return False


def _lost(item, why, target):
    from . import case as case_mod
    index, family, seed = item
    c = case_mod.make(family, seed)
    return {"index": index, "family": family, "seed": seed, "params": c.params,
            "records": {"worker": {"impl": "worker", "status": "error", "stage": "worker",
                                   "message": why}},
            "findings": [], "verdict": "error", "repro": case_mod.repro(c, target),
            "ms": {"total": 0.0}}


def run_inline(items, target, want_frontend, on_result, deadline=None):
    from . import case as case_mod
    from .impls import describe_versions, make
    impls, skipped = make(target, want_frontend)
    for index, family, seed in items:
        if deadline is not None and time.monotonic() > deadline:
            break
        res = case_mod.evaluate(case_mod.make(family, seed), impls, skipped, target)
        res["index"] = index
        on_result(res)
    return describe_versions(impls), skipped


def run_pool(items, target, want_frontend, jobs, timeout, on_result, deadline=None):
    """Evaluate items (index, family, seed) in ``jobs`` processes; returns (versions, skipped).
    Past ``deadline`` (time.monotonic()) no graph is started and the workers are stopped."""
    ctx = mp.get_context("spawn")
    tasks, results = ctx.Queue(), ctx.Queue()
    tasks.cancel_join_thread()  # graphs left unstarted (a time limit) must not block exit
    for item in items:
        tasks.put(item)
    by_index = {item[0]: item for item in items}
    workers = {}
    next_id = [0]

    def spawn():
        wid = next_id[0]
        next_id[0] += 1
        proc = ctx.Process(target=_worker, args=(target, want_frontend, tasks, results, wid),
                           daemon=True)
        proc.start()
        workers[wid] = {"proc": proc, "index": None, "since": None}

    for _ in range(min(jobs, len(items))):
        spawn()
    done, info = set(), [None, None]

    def handle(msg):
        kind, wid = msg[0], msg[1]
        if kind == "fatal":
            for w in workers.values():
                w["proc"].kill()
            raise RuntimeError(f"a worker could not start: {msg[2]}")
        w = workers.get(wid, {})
        if kind == "ready":
            info[:] = [msg[2], msg[3]]
        elif kind == "start":
            w.update(index=msg[2], since=time.monotonic())
        elif kind == "done":
            w.update(index=None, since=None)
            if msg[2] not in done:
                done.add(msg[2])
                on_result(msg[3])
        elif kind == "sick":
            w.update(index=None)

    def drain(wait):
        while True:
            try:
                handle(results.get(timeout=wait))
            except queue.Empty:
                return

    last = time.monotonic()
    while len(done) < len(items):
        if deadline is not None and time.monotonic() > deadline:
            for w in workers.values():
                w["proc"].kill()
            for w in workers.values():
                w["proc"].join(5)
            return tuple(info)
        try:
            handle(results.get(timeout=1.0))
            last = time.monotonic()
        except queue.Empty:
            if time.monotonic() - last > timeout + 60:  # lost messages: give up on the rest
                for item in items:
                    if item[0] not in done:
                        done.add(item[0])
                        on_result(_lost(item, "no worker reported this graph", target))
                break
        for wid, w in list(workers.items()):
            overdue = (w["index"] is not None and w["since"] is not None
                       and time.monotonic() - w["since"] > timeout)
            if w["proc"].is_alive() and not overdue:
                continue
            if overdue:
                w["proc"].kill()
            w["proc"].join(5)
            drain(0.2)  # what it said before it died
            running = w["index"]
            del workers[wid]
            if running is not None and running not in done:
                why = (f"the graph ran past --timeout {timeout} s; its worker was killed"
                       if overdue else f"its worker died (exit code {w['proc'].exitcode})")
                done.add(running)
                on_result(_lost(by_index[running], why, target))
            if len(done) + len(workers) < len(items):
                spawn()
    for _ in workers:
        tasks.put(None)
    for w in workers.values():
        w["proc"].join(10)
        if w["proc"].is_alive():
            w["proc"].kill()
    return tuple(info)
