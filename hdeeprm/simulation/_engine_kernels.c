/* Compiled kernels of hdeeprm.simulation (see hdeeprm/_native.py): the same results as the
 * pure-Python reference, bit for bit.
 *
 * Each function here is the per-host loop of one method of Engine (engine.py), which keeps
 * its checks, its rare branches and everything done once per call; the loop is the part
 * whose cost grows with the hosts (RICC with EASY: tens of millions of host closings).
 *
 * Bit for bit: every float operation is the Python one, on C doubles, in the same order
 * (setup.py compiles with -ffp-contract=off: no fused multiply-add). The loops work on the
 * engine's own lists, storing the very objects the Python would store (a host's new P-state
 * figures are the table's float objects, its "since" the engine's `now`), so nothing else
 * sees a difference.
 *
 * Inputs a loop cannot mirror exactly in doubles (a figure that is not a float, such as an
 * int watt in a platform built by hand) are found by a pass before any change: the function
 * then returns NotImplemented and the caller runs its Python loop instead.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#ifndef SOURCE_DIGEST
#define SOURCE_DIGEST ""
#endif

/* Engine._RESCAN: a job's slowest host is unknown without a pass over its hosts. */
#define RESCAN (-1.0)

/* The names of the SimJob attributes the loops read and write, interned once per module. */
typedef struct {
    PyObject *e_last;  /* "_e_last" */
    PyObject *energy;  /* "energy" */
    PyObject *power;   /* "_power" */
    PyObject *delay;   /* "_delay" */
    PyObject *paces;   /* "_paces" */
    PyObject *rate;    /* "_rate" */
    PyObject *get;     /* "get" */
} kernel_state;

static kernel_state *get_state(PyObject *module) {
    return (kernel_state *)PyModule_GetState(module);
}

/* ---------------------------------------------------------------------------------------
 * Helpers: arguments and list items.
 * ------------------------------------------------------------------------------------- */

/* The argument `arg` as an exact list of length `n`, or NULL with TypeError/ValueError set. */
static PyObject *list_arg(PyObject *arg, const char *what, Py_ssize_t n) {
    if (!PyList_CheckExact(arg)) {
        PyErr_Format(PyExc_TypeError, "%s must be a list", what);
        return NULL;
    }
    if (PyList_GET_SIZE(arg) != n) {
        PyErr_Format(PyExc_ValueError, "%s has %zd items, expected %zd", what,
                     PyList_GET_SIZE(arg), n);
        return NULL;
    }
    return arg;
}

/* The host id `id` (an int) as an index below `n`; -1 with an exception set otherwise. The
 * engine has checked the ids already: this only keeps the loops memory-safe. */
static Py_ssize_t host_index(PyObject *id, Py_ssize_t n) {
    if (!PyLong_Check(id)) {
        PyErr_Format(PyExc_TypeError, "host id %R is not an int", id);
        return -1;
    }
    Py_ssize_t host = PyLong_AsSsize_t(id);
    if (host == -1 && PyErr_Occurred()) return -1;
    if (host < 0 || host >= n) {
        PyErr_Format(PyExc_IndexError, "host id %zd out of range (0..%zd)", host, n - 1);
        return -1;
    }
    return host;
}

/* Item `i` of the list, known to be a float (checked by the caller's first pass). */
static double item_double(PyObject *list, Py_ssize_t i) {
    return PyFloat_AS_DOUBLE(PyList_GET_ITEM(list, i));
}

static int is_float_item(PyObject *list, Py_ssize_t i) {
    return PyFloat_CheckExact(PyList_GET_ITEM(list, i));
}

/* Store a new reference `value` in list[i] (stealing it), releasing the old item. */
static void put_item(PyObject *list, Py_ssize_t i, PyObject *value) {
    PyObject *old = PyList_GET_ITEM(list, i);
    PyList_SET_ITEM(list, i, value);
    Py_DECREF(old);
}

/* Store `value` (borrowed) in list[i]. */
static void put_ref(PyObject *list, Py_ssize_t i, PyObject *value) {
    Py_INCREF(value);
    put_item(list, i, value);
}

/* Store the float `value` in list[i]; -1 on memory error. */
static int put_double(PyObject *list, Py_ssize_t i, double value) {
    PyObject *f = PyFloat_FromDouble(value);
    if (f == NULL) return -1;
    put_item(list, i, f);
    return 0;
}

/* The double value of a job attribute, or -1 with an exception set (`ok` tells which).
 * Floats are read as they are; anything else as Python's float arithmetic would convert it. */
static double job_double(PyObject *job, PyObject *name, int *ok) {
    PyObject *value = PyObject_GetAttr(job, name);
    if (value == NULL) {
        *ok = 0;
        return -1.0;
    }
    double result = PyFloat_CheckExact(value) ? PyFloat_AS_DOUBLE(value) : PyFloat_AsDouble(value);
    Py_DECREF(value);
    *ok = !(result == -1.0 && PyErr_Occurred());
    return result;
}

static int set_job_double(PyObject *job, PyObject *name, double value) {
    PyObject *f = PyFloat_FromDouble(value);
    if (f == NULL) return -1;
    int rc = PyObject_SetAttr(job, name, f);
    Py_DECREF(f);
    return rc;
}

/* The arguments start_hosts and end_hosts share: the job's hosts (a tuple), then from
 * `lists` host_job, cur_idle, cur_full, host_energy, host_since and state_since (lists of one
 * length) and the keep flag. Borrowed references; -1 with an exception set when one is not
 * what it must be. */
typedef struct {
    PyObject *host_job, *cur_idle, *cur_full, *host_energy, *host_since, *state_since;
    Py_ssize_t n;
    int keep;
} host_lists;

static int parse_host_lists(PyObject *alloc, PyObject *const *lists, host_lists *out) {
    if (!PyTuple_Check(alloc)) {
        PyErr_SetString(PyExc_TypeError, "alloc must be a tuple");
        return -1;
    }
    out->host_job = lists[0];
    if (!PyList_CheckExact(out->host_job)) {
        PyErr_SetString(PyExc_TypeError, "host_job must be a list");
        return -1;
    }
    Py_ssize_t n = out->n = PyList_GET_SIZE(out->host_job);
    out->cur_idle = list_arg(lists[1], "cur_idle", n);
    out->cur_full = list_arg(lists[2], "cur_full", n);
    out->host_energy = list_arg(lists[3], "host_energy", n);
    out->host_since = list_arg(lists[4], "host_since", n);
    out->state_since = list_arg(lists[5], "state_since", n);
    if (!out->cur_idle || !out->cur_full || !out->host_energy || !out->host_since ||
        !out->state_since)
        return -1;
    out->keep = PyObject_IsTrue(lists[6]);
    return out->keep < 0 ? -1 : 0;
}

/* ---------------------------------------------------------------------------------------
 * start_hosts: the host loop of Engine._start.
 * ------------------------------------------------------------------------------------- */

/* start_hosts(job, alloc, now, host_job, cur_idle, cur_full, host_energy, host_since,
 *             state_since, keep, cur_speed) -> (full_sum, delta, idle_closed, rate)
 *
 * Mirrors the loop of Engine._start over the job's hosts (both branches: `keep` is
 * self._host_energies): each host gets the job, closes its idle span (energy and state
 * time) and adds its full watts to the job's power and its full-minus-idle to the
 * platform's. `rate` is min(cur_speed[h] for h in alloc) (the same object min() returns)
 * when cur_speed is a list, None when it is None (a delay job). NotImplemented when a figure
 * is not a float (nothing changed: the caller runs the Python loop). */
static PyObject *start_hosts(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "start_hosts() takes 11 arguments");
        return NULL;
    }
    PyObject *job = args[0], *alloc = args[1], *now_obj = args[2];
    host_lists hl;
    if (parse_host_lists(alloc, args + 3, &hl) < 0) return NULL;
    PyObject *host_job = hl.host_job, *cur_idle = hl.cur_idle, *cur_full = hl.cur_full,
             *host_energy = hl.host_energy, *host_since = hl.host_since,
             *state_since = hl.state_since;
    Py_ssize_t n = hl.n;
    int keep = hl.keep;
    PyObject *cur_speed = args[10] == Py_None ? NULL : list_arg(args[10], "cur_speed", n);
    if (args[10] != Py_None && cur_speed == NULL) return NULL;
    if (!PyFloat_CheckExact(now_obj)) Py_RETURN_NOTIMPLEMENTED;
    double now = PyFloat_AS_DOUBLE(now_obj);
    Py_ssize_t count = PyTuple_GET_SIZE(alloc);

    /* First pass: ids in range and every figure a float, before any change. */
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t host = host_index(PyTuple_GET_ITEM(alloc, k), n);
        if (host < 0) return NULL;
        if (!is_float_item(cur_idle, host) || !is_float_item(cur_full, host) ||
            !is_float_item(state_since, host) ||
            (keep && (!is_float_item(host_energy, host) || !is_float_item(host_since, host))) ||
            (cur_speed && !is_float_item(cur_speed, host)))
            Py_RETURN_NOTIMPLEMENTED;
    }

    double full_sum = 0.0, delta = 0.0, idle_closed = 0.0;
    PyObject *rate = NULL; /* borrowed: the first slowest speed, as min() returns it */
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t host = PyLong_AsSsize_t(PyTuple_GET_ITEM(alloc, k));
        put_ref(host_job, host, job);
        double idle = item_double(cur_idle, host);
        double full = item_double(cur_full, host);
        if (keep) {
            double since = item_double(host_since, host);
            /* A host switched at this very instant adds nothing (idle x 0.0 adds +0.0). */
            if (since != now) {
                double energy = item_double(host_energy, host) + idle * (now - since);
                if (put_double(host_energy, host, energy) < 0) return NULL;
                put_ref(host_since, host, now_obj);
            }
        }
        idle_closed += now - item_double(state_since, host);
        put_ref(state_since, host, now_obj);
        full_sum += full;
        delta += full - idle;
        if (cur_speed) {
            PyObject *speed = PyList_GET_ITEM(cur_speed, host);
            if (rate == NULL || PyFloat_AS_DOUBLE(speed) < PyFloat_AS_DOUBLE(rate)) rate = speed;
        }
    }
    if (rate == NULL) rate = Py_None; /* a delay job, or an empty allocation */
    return Py_BuildValue("(dddO)", full_sum, delta, idle_closed, rate);
}

/* ---------------------------------------------------------------------------------------
 * end_hosts: the host loop of Engine._end.
 * ------------------------------------------------------------------------------------- */

/* end_hosts(alloc, now, busy, host_job, cur_idle, cur_full, host_energy, host_since,
 *           state_since, keep) -> (delta, busy_closed)
 *
 * Mirrors the loop of Engine._end over the ended job's hosts (both branches): each host is
 * freed, closes its busy span (energy at full watts; `busy`, the job's run time, as state
 * time) and gives back its full-minus-idle watts. NotImplemented when a figure is not a
 * float (nothing changed). */
static PyObject *end_hosts(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "end_hosts() takes 10 arguments");
        return NULL;
    }
    PyObject *alloc = args[0], *now_obj = args[1], *busy_obj = args[2];
    host_lists hl;
    if (parse_host_lists(alloc, args + 3, &hl) < 0) return NULL;
    PyObject *host_job = hl.host_job, *cur_idle = hl.cur_idle, *cur_full = hl.cur_full,
             *host_energy = hl.host_energy, *host_since = hl.host_since,
             *state_since = hl.state_since;
    Py_ssize_t n = hl.n;
    int keep = hl.keep;
    if (!PyFloat_CheckExact(now_obj) || !PyFloat_CheckExact(busy_obj)) Py_RETURN_NOTIMPLEMENTED;
    double now = PyFloat_AS_DOUBLE(now_obj), busy = PyFloat_AS_DOUBLE(busy_obj);
    Py_ssize_t count = PyTuple_GET_SIZE(alloc);

    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t host = host_index(PyTuple_GET_ITEM(alloc, k), n);
        if (host < 0) return NULL;
        if (!is_float_item(cur_idle, host) || !is_float_item(cur_full, host) ||
            (keep && (!is_float_item(host_energy, host) || !is_float_item(host_since, host))))
            Py_RETURN_NOTIMPLEMENTED;
    }

    double delta = 0.0, busy_closed = 0.0;
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t host = PyLong_AsSsize_t(PyTuple_GET_ITEM(alloc, k));
        put_ref(host_job, host, Py_None);
        double full = item_double(cur_full, host);
        if (keep) {
            double energy = item_double(host_energy, host) +
                            full * (now - item_double(host_since, host));
            if (put_double(host_energy, host, energy) < 0) return NULL;
            put_ref(host_since, host, now_obj);
        }
        busy_closed += busy;
        put_ref(state_since, host, now_obj);
        delta += full - item_double(cur_idle, host);
    }
    return Py_BuildValue("(dd)", delta, busy_closed);
}

/* ---------------------------------------------------------------------------------------
 * switch_hosts: the host loop of Engine._set_state.
 * ------------------------------------------------------------------------------------- */

/* What the loop of switch_hosts keeps of the job whose hosts it is going through: the
 * engine's loop reads and writes job._power and dirty[job] once per host; consecutive hosts
 * of one job (the usual case) share these values here and write them back when the job
 * changes. Per job, the float operations are the same, in the same order. */
typedef struct {
    PyObject *job;     /* borrowed from host_job; NULL: no job */
    double power;      /* job._power so far */
    int delay;         /* job._delay */
    PyObject *slowest; /* new reference: dirty[job] so far; NULL: not touched by this run */
} job_run;

/* Write back what `run` holds of its job (job._power, dirty[job]) and forget it. */
static int flush_run(kernel_state *st, job_run *run, PyObject *dirty) {
    int rc = 0;
    if (run->job == NULL) return 0;
    if (set_job_double(run->job, st->power, run->power) < 0) rc = -1;
    if (rc == 0 && run->slowest != NULL && PyDict_SetItem(dirty, run->job, run->slowest) < 0)
        rc = -1;
    Py_CLEAR(run->slowest);
    run->job = NULL;
    return rc;
}

/* Start keeping `job` in `run`: close its energy up to now once per instant (as the engine's
 * `if job._e_last != now` does), then read its power and whether it is a delay job. */
static int open_run(kernel_state *st, job_run *run, PyObject *job, double now) {
    int ok;
    double e_last = job_double(job, st->e_last, &ok);
    if (!ok) return -1;
    if (e_last != now) {
        double energy = job_double(job, st->energy, &ok);
        if (!ok) return -1;
        double power = job_double(job, st->power, &ok);
        if (!ok) return -1;
        if (set_job_double(job, st->energy, energy + power * (now - e_last)) < 0) return -1;
        if (set_job_double(job, st->e_last, now) < 0) return -1;
    }
    run->power = job_double(job, st->power, &ok);
    if (!ok) return -1;
    PyObject *delay = PyObject_GetAttr(job, st->delay);
    if (delay == NULL) return -1;
    run->delay = PyObject_IsTrue(delay);
    Py_DECREF(delay);
    if (run->delay < 0) return -1;
    run->job = job;
    run->slowest = NULL;
    return 0;
}

/* Move one host of a job from speed `old_speed` to `new_speed` in job._paces (a Counter of
 * its hosts by speed), as the engine does: paces[old] - 1, deleted at zero; paces.get(new,
 * 0) + 1. */
static int move_pace(kernel_state *st, PyObject *paces, PyObject *old_speed,
                     PyObject *new_speed) {
    PyObject *count = PyObject_GetItem(paces, old_speed);
    if (count == NULL) return -1;
    PyObject *one = PyLong_FromLong(1);
    if (one == NULL) {
        Py_DECREF(count);
        return -1;
    }
    PyObject *left = PyNumber_Subtract(count, one);
    Py_DECREF(count);
    if (left == NULL) {
        Py_DECREF(one);
        return -1;
    }
    int nonzero = PyObject_IsTrue(left);
    int rc = nonzero < 0 ? -1
             : nonzero   ? PyObject_SetItem(paces, old_speed, left)
                         : PyObject_DelItem(paces, old_speed);
    Py_DECREF(left);
    if (rc < 0) {
        Py_DECREF(one);
        return -1;
    }
    PyObject *zero = PyLong_FromLong(0);
    PyObject *had = zero ? PyObject_CallMethodObjArgs(paces, st->get, new_speed, zero, NULL)
                         : NULL;
    Py_XDECREF(zero);
    PyObject *now_count = had ? PyNumber_Add(had, one) : NULL;
    Py_XDECREF(had);
    Py_DECREF(one);
    if (now_count == NULL) return -1;
    rc = PyObject_SetItem(paces, new_speed, now_count);
    Py_DECREF(now_count);
    return rc;
}

/* A busy host of the job in `run` changes speed from `old_speed` to `new_speed`: move it in
 * job._paces and bring dirty[job], the slowest speed of its hosts so far (or RESCAN), up to
 * date, as the engine's loop does. */
static int repace_host(kernel_state *st, job_run *run, PyObject *dirty, PyObject *old_speed,
                       PyObject *new_speed) {
    PyObject *job = run->job;
    PyObject *paces = PyObject_GetAttr(job, st->paces);
    if (paces == NULL) return -1;
    int rc = paces == Py_None ? 0 : move_pace(st, paces, old_speed, new_speed);
    Py_DECREF(paces);
    if (rc < 0) return -1;
    if (run->slowest == NULL) { /* dirty.get(job, job._rate) */
        PyObject *known = PyDict_GetItemWithError(dirty, job);
        if (known != NULL) {
            Py_INCREF(known);
        } else if (PyErr_Occurred()) {
            return -1;
        } else {
            known = PyObject_GetAttr(job, st->rate);
            if (known == NULL) return -1;
        }
        run->slowest = known;
    }
    double slowest = PyFloat_AsDouble(run->slowest);
    if (slowest == -1.0 && PyErr_Occurred()) return -1;
    if (slowest != RESCAN) {
        double old_v = PyFloat_AS_DOUBLE(old_speed), new_v = PyFloat_AS_DOUBLE(new_speed);
        PyObject *replace = NULL;
        if (new_v < old_v) {
            if (new_v < slowest) {
                replace = new_speed;
                Py_INCREF(replace);
            }
        } else if (old_v <= slowest) {
            replace = PyFloat_FromDouble(RESCAN);
            if (replace == NULL) return -1;
        }
        if (replace != NULL) Py_SETREF(run->slowest, replace);
    }
    return 0;
}

/* switch_hosts(hosts, state, now, idle_s, full_s, speed_s, pstate, cur_speed, cur_idle,
 *              cur_full, host_job, host_energy, host_since, dirty, keep, trace)
 *     -> (d_power, d_wattmin)
 *
 * Mirrors the loop of Engine._set_state over the switched hosts, when the P-state's tables
 * are the cached lists (a state every host has): each host takes the new state's figures;
 * an idle one closes its energy and changes the power by its idle watts; a busy one closes
 * its job's energy once per instant, changes the job's power (and the platform's) by its
 * full watts and, when its speed changes (not for a delay job), moves in job._paces and
 * updates dirty[job] (the job's pace so far, or RESCAN). d_wattmin is summed only with
 * `trace`, host energies closed only with `keep`. NotImplemented when a figure is not a
 * float (nothing changed). */
static PyObject *switch_hosts(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    kernel_state *st = get_state(module);
    if (nargs != 16) {
        PyErr_SetString(PyExc_TypeError, "switch_hosts() takes 16 arguments");
        return NULL;
    }
    PyObject *hosts = args[0], *state = args[1], *now_obj = args[2];
    if (!PyTuple_Check(hosts)) {
        PyErr_SetString(PyExc_TypeError, "hosts must be a tuple");
        return NULL;
    }
    PyObject *host_job = args[10];
    if (!PyList_CheckExact(host_job)) {
        PyErr_SetString(PyExc_TypeError, "host_job must be a list");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(host_job);
    PyObject *idle_s = list_arg(args[3], "idle_s", n);
    PyObject *full_s = list_arg(args[4], "full_s", n);
    PyObject *speed_s = list_arg(args[5], "speed_s", n);
    PyObject *pstate = list_arg(args[6], "pstate", n);
    PyObject *cur_speed = list_arg(args[7], "cur_speed", n);
    PyObject *cur_idle = list_arg(args[8], "cur_idle", n);
    PyObject *cur_full = list_arg(args[9], "cur_full", n);
    PyObject *host_energy = list_arg(args[11], "host_energy", n);
    PyObject *host_since = list_arg(args[12], "host_since", n);
    if (!idle_s || !full_s || !speed_s || !pstate || !cur_speed || !cur_idle || !cur_full ||
        !host_energy || !host_since)
        return NULL;
    PyObject *dirty = args[13];
    if (!PyDict_CheckExact(dirty)) {
        PyErr_SetString(PyExc_TypeError, "dirty must be a dict");
        return NULL;
    }
    int keep = PyObject_IsTrue(args[14]);
    if (keep < 0) return NULL;
    int trace = PyObject_IsTrue(args[15]);
    if (trace < 0) return NULL;
    if (!PyFloat_CheckExact(now_obj)) Py_RETURN_NOTIMPLEMENTED;
    double now = PyFloat_AS_DOUBLE(now_obj);
    Py_ssize_t count = PyTuple_GET_SIZE(hosts);

    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t host = host_index(PyTuple_GET_ITEM(hosts, k), n);
        if (host < 0) return NULL;
        if (!is_float_item(idle_s, host) || !is_float_item(full_s, host) ||
            !is_float_item(speed_s, host) || !is_float_item(cur_speed, host) ||
            !is_float_item(cur_idle, host) || !is_float_item(cur_full, host) ||
            (keep && (!is_float_item(host_energy, host) || !is_float_item(host_since, host))))
            Py_RETURN_NOTIMPLEMENTED;
    }

    double d_power = 0.0, d_wattmin = 0.0;
    job_run run = {NULL, 0.0, 0, NULL};
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t host = PyLong_AsSsize_t(PyTuple_GET_ITEM(hosts, k));
        double old_idle = item_double(cur_idle, host);
        PyObject *new_idle = PyList_GET_ITEM(idle_s, host);
        double new_idle_v = PyFloat_AS_DOUBLE(new_idle);
        PyObject *job = PyList_GET_ITEM(host_job, host);
        if (job == Py_None) {
            if (keep) {
                double since = item_double(host_since, host);
                if (since != now) {
                    double energy = item_double(host_energy, host) + old_idle * (now - since);
                    if (put_double(host_energy, host, energy) < 0) goto error;
                }
                put_ref(host_since, host, now_obj);
            }
            double change = new_idle_v - old_idle;
            d_power += change;
            if (trace) d_wattmin += change;
            put_ref(cur_full, host, PyList_GET_ITEM(full_s, host));
        } else {
            double old_p = item_double(cur_full, host);
            PyObject *new_full = PyList_GET_ITEM(full_s, host);
            double new_full_v = PyFloat_AS_DOUBLE(new_full);
            if (job != run.job) {
                if (flush_run(st, &run, dirty) < 0) goto error;
                if (open_run(st, &run, job, now) < 0) goto error;
            }
            run.power += new_full_v - old_p;
            PyObject *new_speed = PyList_GET_ITEM(speed_s, host);
            PyObject *old_speed = PyList_GET_ITEM(cur_speed, host);
            if (PyFloat_AS_DOUBLE(new_speed) != PyFloat_AS_DOUBLE(old_speed) && !run.delay) {
                if (repace_host(st, &run, dirty, old_speed, new_speed) < 0) goto error;
            }
            if (keep) {
                double energy = item_double(host_energy, host) +
                                old_p * (now - item_double(host_since, host));
                if (put_double(host_energy, host, energy) < 0) goto error;
                put_ref(host_since, host, now_obj);
            }
            d_power += new_full_v - old_p;
            if (trace) d_wattmin += new_idle_v - old_idle;
            put_ref(cur_full, host, new_full);
        }
        put_ref(pstate, host, state);
        put_ref(cur_speed, host, PyList_GET_ITEM(speed_s, host));
        put_ref(cur_idle, host, new_idle);
    }
    if (flush_run(st, &run, dirty) < 0) goto error;
    return Py_BuildValue("(dd)", d_power, d_wattmin);

error:
    Py_CLEAR(run.slowest);
    return NULL;
}

/* ---------------------------------------------------------------------------------------
 * free_alloc: the allocation checks of Engine._execute.
 * ------------------------------------------------------------------------------------- */

/* A host id and its object, to sort an allocation by id keeping its int objects. */
typedef struct {
    Py_ssize_t id;
    PyObject *obj; /* borrowed from the allocation */
} host_entry;

static int compare_entries(const void *a, const void *b) {
    Py_ssize_t x = ((const host_entry *)a)->id, y = ((const host_entry *)b)->id;
    return (x > y) - (x < y);
}

/* free_alloc(alloc, host_job) -> tuple | None
 *
 * Mirrors Engine._execute's handling of an allocation that is not a HostIds: tuple(alloc)
 * (_host_ids), sorted ascending, then its checks (ids in range, hosts free, no duplicates).
 * When the allocation is a list or a tuple, every id an int (exactly) and every check passes, returns the sorted tuple of the
 * allocation's own int objects, which is what the Python makes of it; otherwise None, and
 * the caller runs the Python, which converts other integer types or raises the error that
 * names the faulty host. */
static PyObject *free_alloc(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "free_alloc() takes 2 arguments");
        return NULL;
    }
    PyObject *host_job = args[1];
    if (!PyList_CheckExact(host_job)) {
        PyErr_SetString(PyExc_TypeError, "host_job must be a list");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(host_job);
    /* Only a list or a tuple: another iterable could be an iterator, which the Python could
     * not read again after a decline. */
    if (!PyList_CheckExact(args[0]) && !PyTuple_CheckExact(args[0])) Py_RETURN_NONE;
    PyObject *seq = PySequence_Fast(args[0], "alloc must be a list or a tuple");
    if (seq == NULL) return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *result = NULL;
    host_entry *entries = PyMem_New(host_entry, count > 0 ? count : 1);
    if (entries == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int sorted = 1;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *id = items[k];
        if (!PyLong_CheckExact(id)) goto decline;
        int overflow;
        long long host = PyLong_AsLongLongAndOverflow(id, &overflow);
        if (host == -1 && PyErr_Occurred()) goto done;
        if (overflow || host < 0 || host >= n) goto decline;
        if (PyList_GET_ITEM(host_job, host) != Py_None) goto decline;
        entries[k].id = (Py_ssize_t)host;
        entries[k].obj = id;
        if (k > 0 && entries[k].id <= entries[k - 1].id) sorted = 0;
    }
    if (count == 0) goto decline; /* an empty allocation: the Python says so */
    if (!sorted) {
        qsort(entries, (size_t)count, sizeof(host_entry), compare_entries);
        for (Py_ssize_t k = 1; k < count; k++)
            if (entries[k].id == entries[k - 1].id) goto decline; /* a duplicate */
    }
    result = PyTuple_New(count);
    if (result == NULL) goto done;
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_INCREF(entries[k].obj);
        PyTuple_SET_ITEM(result, k, entries[k].obj);
    }
    goto done;
decline:
    result = Py_None;
    Py_INCREF(result);
done:
    PyMem_Free(entries);
    Py_DECREF(seq);
    return result;
}

/* ---------------------------------------------------------------------------------------
 * The module.
 * ------------------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"start_hosts", (PyCFunction)(void (*)(void))start_hosts, METH_FASTCALL,
     "The host loop of Engine._start."},
    {"end_hosts", (PyCFunction)(void (*)(void))end_hosts, METH_FASTCALL,
     "The host loop of Engine._end."},
    {"switch_hosts", (PyCFunction)(void (*)(void))switch_hosts, METH_FASTCALL,
     "The host loop of Engine._set_state (cached P-state tables)."},
    {"free_alloc", (PyCFunction)(void (*)(void))free_alloc, METH_FASTCALL,
     "The allocation checks of Engine._execute."},
    {NULL, NULL, 0, NULL},
};

static int module_traverse(PyObject *m, visitproc visit, void *arg) {
    kernel_state *st = get_state(m);
    Py_VISIT(st->e_last);
    Py_VISIT(st->energy);
    Py_VISIT(st->power);
    Py_VISIT(st->delay);
    Py_VISIT(st->paces);
    Py_VISIT(st->rate);
    Py_VISIT(st->get);
    return 0;
}

static int module_clear(PyObject *m) {
    kernel_state *st = get_state(m);
    Py_CLEAR(st->e_last);
    Py_CLEAR(st->energy);
    Py_CLEAR(st->power);
    Py_CLEAR(st->delay);
    Py_CLEAR(st->paces);
    Py_CLEAR(st->rate);
    Py_CLEAR(st->get);
    return 0;
}

static void module_free(void *m) { module_clear((PyObject *)m); }

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "_engine_kernels",
    "The per-host loops of hdeeprm.simulation.engine.Engine, compiled.",
    sizeof(kernel_state),
    methods,
    NULL,
    module_traverse,
    module_clear,
    module_free,
};

PyMODINIT_FUNC PyInit__engine_kernels(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    kernel_state *st = get_state(m);
    if ((st->e_last = PyUnicode_InternFromString("_e_last")) == NULL ||
        (st->energy = PyUnicode_InternFromString("energy")) == NULL ||
        (st->power = PyUnicode_InternFromString("_power")) == NULL ||
        (st->delay = PyUnicode_InternFromString("_delay")) == NULL ||
        (st->paces = PyUnicode_InternFromString("_paces")) == NULL ||
        (st->rate = PyUnicode_InternFromString("_rate")) == NULL ||
        (st->get = PyUnicode_InternFromString("get")) == NULL ||
        PyModule_AddStringConstant(m, "SOURCE_DIGEST", SOURCE_DIGEST) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
