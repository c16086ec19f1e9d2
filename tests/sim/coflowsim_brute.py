"""A slow, literal CoflowSim for the tests: every flow, every 8 ms quantum, in plain Python.

Written from CoflowSim's rules (the trace-driven simulator of Varys: Chowdhury, Zhong, Stoica,
SIGCOMM 2014, section 7; its event loop: admission epochs, per-quantum flow updates in
reducer-port order, rates recomputed only when coflows are admitted or depart).  It shares
nothing with the compiled kernels of :mod:`coflowopt.sim.coflowsim` but the transformed flows
(:func:`~coflowopt.sim.coflowsim.model.build_model`, whose rounding has its own hand-worked
tests), so the kernel's event jumps and floating-point replay are checked
against a quantum-by-quantum run.
"""

from __future__ import annotations

import numpy as np

ZERO = 1e-3
CAP = 1024 * 1048576.0  # bits per second
PER_Q = CAP / 8.0 * (8 / 1024)  # bytes per 8 ms quantum


class _Flow:
    def __init__(self, idx, src, red, size):
        self.idx, self.src, self.red, self.size = idx, src, red, size
        self.rem, self.bps = size, 0.0


class _Red:
    def __init__(self, rack, job, size, perrack):
        self.rack, self.job, self.left, self.perrack = rack, job, size, perrack
        self.flows: list[_Flow] = []
        self.finish = -1.0

    @property
    def completed(self):
        return self.finish >= 0


class _Job:
    def __init__(self, j, arrival, alpha, deadline, scf, ncf):
        self.j, self.arrival, self.alpha, self.deadline = j, arrival, alpha, deadline
        self.scf, self.ncf = scf, ncf
        self.reds: list[_Red] = []
        self.start = self.finish = -1.0
        self.sent = 0.0
        self.queue = 0

    def bytes_left(self):
        return sum(r.perrack for r in self.reds)

    def active(self):
        return self.start >= 0 and not all(r.completed for r in self.reds)


def simulate(model, kind: str, epoch_ms: int = 10240, q_ms: int = 8):
    """Per-job ``(start, finish)`` arrays, jobs in the model's order.  ``kind``: CoflowSim's
    sebf, dark, fifo, scf, ncf, lcf, fair, pfp, or a-sebf (DARK's queues on bytes sent per
    receiver port: the A-SEBF paper's bottleneck factor ``λ = S / W``)."""
    dclas = kind in ("dark", "a-sebf")
    jobs: list[_Job] = []
    for j in range(model.arrival.size):
        job = _Job(j, model.arrival[j], model.alpha[j], model.deadline[j], model.scf_key[j],
                   model.ncf_key[j])
        for r in range(model.red_ptr[j], model.red_ptr[j + 1]):
            red = _Red(int(model.red_rack[r]), job, float(model.red_bytes[r]),
                       float(model.red_perrack[r]))
            for f in range(model.flow_ptr[r], model.flow_ptr[r + 1]):
                red.flows.append(_Flow(f, int(model.flow_src[f]), red,
                                       float(model.flow_size[f])))
            job.reds.append(red)
        jobs.append(job)
    n_in, n_out = model.n_in, model.n_out
    order: list[_Job] = []  # sortedJobs, or the D-CLAS queues concatenated
    queues: list[list[_Job]] = [[] for _ in range(10)]
    racks: list[list[_Flow]] = [[] for _ in range(n_out)]

    def layout():
        for lst in racks:
            lst.clear()
        for job in ([jb for qu in queues for jb in qu] if dclas else order):
            for red in job.reds:
                if not red.completed:
                    racks[red.rack].extend(red.flows)

    def alpha_online(job, sfree, rfree):
        sb, rb = np.zeros(n_in), np.zeros(n_out)
        for red in job.reds:
            rb[red.rack] = red.left
            for f in red.flows:
                sb[f.src] += f.rem
        for i in range(n_in):
            if sb[i] > 0 and sfree[i] <= ZERO:
                return -1.0
        for i in range(n_out):
            if rb[i] > 0 and rfree[i] <= ZERO:
                return -1.0
        best = 4.9e-324
        with np.errstate(divide="ignore", invalid="ignore"):
            for v in list(sb * 8 / sfree) + list(rb * 8 / rfree):
                if v > best:
                    best = v
        return best

    def equal_split(group, sfree, rfree):
        nm, nr = np.zeros(n_in, int), np.zeros(n_out, int)
        for job in group:
            for red in job.reds:
                if rfree[red.rack] <= ZERO:
                    continue
                for f in red.flows:
                    if sfree[f.src] > ZERO:
                        nm[f.src] += 1
                        nr[red.rack] += 1
        su, ru = np.zeros(n_in), np.zeros(n_out)
        for job in group:
            for red in job.reds:
                if rfree[red.rack] <= ZERO or nr[red.rack] == 0:
                    continue
                for f in red.flows:
                    if sfree[f.src] <= ZERO or nm[f.src] == 0:
                        continue
                    m = min(sfree[f.src] / nm[f.src], rfree[red.rack] / nr[red.rack])
                    f.bps = 0.0 if m <= ZERO else m
                    su[f.src] += f.bps
                    ru[red.rack] += f.bps
        return su, ru

    def rates_madd(now):
        sfree, rfree = np.full(n_in, CAP), np.full(n_out, CAP)
        skipped = []
        for job in order:
            for red in job.reds:
                for f in red.flows:
                    f.bps = 0.0
            a = alpha_online(job, sfree, rfree)
            if a == -1.0:
                skipped.append(job)
                continue
            su, ru = np.zeros(n_in), np.zeros(n_out)
            for red in job.reds:
                if rfree[red.rack] <= ZERO:
                    continue
                for f in red.flows:
                    b = f.rem * 8 / a
                    if b > sfree[f.src] or b > rfree[red.rack]:
                        b = min(sfree[f.src], rfree[red.rack])
                    su[f.src] += b
                    ru[red.rack] += b
                    f.bps = b
            sfree -= su
            rfree -= ru
        su, ru = equal_split(skipped, sfree, rfree)
        sfree -= su
        rfree -= ru
        edf = sorted(order, key=lambda jb: int(jb.start + jb.deadline - now))  # stable
        for job in edf:
            for red in job.reds:
                if rfree[red.rack] <= ZERO:
                    continue
                for f in red.flows:
                    m = min(sfree[f.src], rfree[red.rack])
                    m = 0.0 if m <= ZERO else m
                    f.bps += m
                    sfree[f.src] -= m
                    rfree[red.rack] -= m

    def rates_dark():
        sfree, rfree = np.full(n_in, CAP), np.full(n_out, CAP)
        for job in [jb for qu in queues for jb in qu]:
            for red in job.reds:
                if rfree[red.rack] <= ZERO:
                    for f in red.flows:
                        f.bps = 0.0
                    continue
                for f in red.flows:
                    if sfree[f.src] <= ZERO:
                        f.bps = 0.0
            su, ru = equal_split([job], sfree, rfree)
            sfree -= su
            rfree -= ru

    def dark_order():
        for i in range(10):
            move = []
            for job in queues[i]:
                target, lim = 0, 10 * 1048576.0
                while lim < job.sent / (len(job.reds) if kind == "a-sebf" else 1):
                    target += 1
                    lim *= 10.0
                if job.queue < target:
                    job.queue += 1
                    move.append(job)
            if i + 1 < 10 and move:
                queues[i] = [jb for jb in queues[i] if jb not in move]
                queues[i + 1].extend(move)

    def insert(job):
        if kind == "fifo":
            order.append(job)
            return
        key = {"scf": lambda jb: jb.scf, "ncf": lambda jb: jb.ncf,
               "lcf": lambda jb: jb.bytes_left(), "sebf": lambda jb: jb.alpha}[kind]
        k = key(job)
        idx = 0
        while idx < len(order) and not k < key(order[idx]):
            idx += 1
        order.insert(idx, job)

    def complete_red(red, t):
        red.finish = t
        red.left = 0.0
        job = red.job
        if all(r.completed for r in job.reds):
            job.finish = max(r.finish for r in job.reds)
            if job in order:
                order.remove(job)
            for qu in queues:
                if job in qu:
                    qu.remove(job)

    def proceed(now):
        for i in range(n_out):
            gone = []
            for f in racks[i]:
                red = f.red
                b = min((f.bps / 8) * (q_ms / 1024), f.rem)
                f.rem -= b
                if f.rem <= ZERO:
                    red.flows.remove(f)
                    gone.append(f)
                red.left -= b
                red.perrack = max(red.perrack - b, 0.0)
                red.job.sent += b
                if (red.left <= ZERO or not red.flows) and not red.completed:
                    complete_red(red, now + q_ms)
            racks[i] = [f for f in racks[i] if f not in gone]

    def proceed_fair(now):
        nm = np.zeros(n_in, int)
        for lst in racks:
            for f in lst:
                nm[f.src] += 1
        for i in range(n_out):
            gone = []
            n = len(racks[i])
            for f in racks[i]:
                b = min(min(PER_Q / n, PER_Q / nm[f.src]), f.rem)
                f.rem -= b
                if f.rem <= ZERO:
                    f.red.flows.remove(f)
                    gone.append(f)
                f.red.left -= b
                if (f.red.left <= ZERO or not f.red.flows) and not f.red.completed:
                    complete_red(f.red, now + q_ms)
            racks[i] = [f for f in racks[i] if f not in gone]

    def proceed_pfp(now):
        busy = np.zeros(n_in, bool)
        for i in range(n_out):
            for f in racks[i]:
                if busy[f.src]:
                    continue
                busy[f.src] = True
                b = min(PER_Q, f.rem)
                f.rem -= b
                if f.rem <= ZERO:
                    f.red.flows.remove(f)
                    racks[i].remove(f)
                f.red.left -= b
                if (f.red.left <= ZERO or not f.red.flows) and not f.red.completed:
                    complete_red(f.red, now + q_ms)
                break

    cur, t = 0, 0
    while cur < len(jobs) or any(jb.active() for jb in jobs):
        added = 0
        while cur < len(jobs) and jobs[cur].arrival <= t + epoch_ms:
            job = jobs[cur]
            job.start = t
            cur += 1
            added += 1
            if kind in ("fair", "pfp"):
                for red in job.reds:
                    for f in red.flows:
                        lst = racks[red.rack]
                        k = 0
                        while k < len(lst) and not lst[k].rem > f.size:
                            k += 1
                        lst.insert(k, f)
            elif dclas:
                queues[0].append(job)
            else:
                insert(job)
        if added and kind not in ("fair", "pfp"):
            if dclas:
                dark_order()
                layout()
                rates_dark()
            else:
                layout()
                rates_madd(float(t))
        for i in range(0, epoch_ms, q_ms):
            live = [jb for jb in jobs if jb.active()]
            if not live:
                break
            now = t + i
            if kind == "fair":
                proceed_fair(now)
            elif kind == "pfp":
                proceed_pfp(now)
            else:
                proceed(now)
            if kind not in ("fair", "pfp") and any(not jb.active() for jb in live):
                if dclas:
                    dark_order()
                    layout()
                    rates_dark()
                else:
                    rates_madd(float(now))
        t += epoch_ms
    return (np.array([jb.start for jb in jobs], dtype=float),
            np.array([jb.finish for jb in jobs], dtype=float))
