/* Compiled kernels of hdeeprm.decision (see hdeeprm/_native.py): the same results as the
 * pure-Python reference, bit for bit.
 *
 * One object per core pool, ``Pool``, holds references to the very lists, dicts and sets the
 * Python CorePool (hdeeprm/decision/resources.py) keeps, and its bound methods shadow the
 * pool's Python methods: everything else keeps reading ``pool.pstate``, ``pool.proc_free`` and
 * the rest as before. Python rebinds some of those lists (``reset``, ``_keep_free_order``):
 * the ``Pool`` then reads them again (``refresh``, from ``CorePool._bind_native``), so a
 * method bound once stays valid for the pool's lifetime.
 *
 * Every function below mirrors one Python method, statement for statement where floats are
 * involved: the same additions in the same order on C doubles (compiled without contraction,
 * setup.py), so the sums are the Python's bit for bit. Listeners, change logs, the
 * over-subscription record and the warning tallies are Python objects called through the C API
 * with the same arguments (the same types too: a set's ``update`` with a dict pre-sizes its
 * table, with a list it does not, which changes the set's iteration order). No state is kept
 * here besides those references (and the scratch buffers of the fit counts' recount).
 *
 * Arguments of unusual types (a memory or bandwidth that is not a float, an index out of range)
 * are not handled here: the call goes to the Python method instead, before anything changed
 * (the fit counts' recount, a loop inside a Python method, returns NotImplemented: its caller
 * then runs that loop).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#ifndef SOURCE_DIGEST
#define SOURCE_DIGEST ""
#endif

/* hdeeprm.decision.resources.MEM_TOL (the tests check that both agree). */
#define MEM_TOL 1e-6
/* hdeeprm.decision.fit._SLACK (likewise). */
#define FIT_SLACK 1e-9
/* P-states (hdeeprm.platform.hierarchy). */
#define P0 0
#define P1 1
#define P2 2
#define P3 3
/* logging.WARNING */
#define LOG_WARNING 30

typedef struct {
    PyObject_HEAD
    PyObject *pool;
    /* static views */
    PyObject *core_proc, *proc_node, *proc_cores, *node_procs, *node_capacity, *bw_limit,
        *proc_mem_bw;
    /* dynamic state */
    PyObject *core_job, *core_mem, *core_bw, *pstate, *emitted, *proc_free, *proc_busy,
        *proc_demand, *node_free_mem, *node_busy, *free_cores, *free_index, *over, *run_state,
        *idle_state, *open_episode, *episodes, *changed;
    /* listeners and logs */
    PyObject *gain_listeners, *node_gain_listeners, *demand_listeners, *node_change_listeners,
        *over_starts, *over_ends;
    /* given by the Python side: the logger, the open episode's end, the decision types and
     * the class whose methods are the reference (the fallback) */
    PyObject *logger, *open_end, *set_resource_state, *host_ids, *reference;
    /* One 0.0 for the per-core values a release resets (as the Python's constant 0.0): no
     * float allocated per core. */
    PyObject *zero;
    int free_order;
    /* The fit counts' recounts (floor_catch_up, size_catch_up): per node, the call that last
     * met it (each node recounted once per call without a set), the nodes met in order and
     * their figures or new counts (all read and checked before any change). Sized by node
     * count on first use. */
    unsigned int *marks;
    unsigned int mark;
    Py_ssize_t nb_marks;
    Py_ssize_t *met;
    double *figures;
    Py_ssize_t *tallies;
} PoolObject;

/* Interned attribute and method names, created at module init (immutable). */
static PyObject *s_free_count, *s_update, *s_nodes, *s_append, *s_gained, *s_is_enabled_for,
    *s_procs, *s_starts, *s_ends, *s_take_run, *s_release, *s_settle_taken, *s_open,
    *s_listed, *s_gained_set, *s_take, *s_order, *s_rank, *s_nb_tree, *s_tree_sweep, *s_allocate,
    *s_dirty, *s_tree, *s_size;

/* ---- small helpers ------------------------------------------------------------------- */

/* list[i] (borrowed), with Python's IndexError when out of range (no negative indices: the
 * pool's ids are never negative). */
static inline PyObject *item(PyObject *list, Py_ssize_t i) {
    if (i < 0 || i >= PyList_GET_SIZE(list)) {
        PyErr_SetString(PyExc_IndexError, "list index out of range");
        return NULL;
    }
    return PyList_GET_ITEM(list, i);
}

/* list[i] = value (a new reference, stolen even on error). */
static inline int set_item(PyObject *list, Py_ssize_t i, PyObject *value) {
    if (value == NULL) return -1;
    if (i < 0 || i >= PyList_GET_SIZE(list)) {
        Py_DECREF(value);
        PyErr_SetString(PyExc_IndexError, "list assignment index out of range");
        return -1;
    }
    PyObject *old = PyList_GET_ITEM(list, i);
    PyList_SET_ITEM(list, i, value);
    Py_DECREF(old);
    return 0;
}

static inline int set_borrowed(PyObject *list, Py_ssize_t i, PyObject *value) {
    Py_INCREF(value);
    return set_item(list, i, value);
}

static inline int get_ssize(PyObject *list, Py_ssize_t i, Py_ssize_t *out) {
    PyObject *o = item(list, i);
    if (o == NULL) return -1;
    Py_ssize_t v = PyLong_AsSsize_t(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    *out = v;
    return 0;
}

/* A float element as a double: exact floats directly; anything else as float(x), which is
 * the double Python's float arithmetic would convert it to. */
static inline int get_double(PyObject *list, Py_ssize_t i, double *out) {
    PyObject *o = item(list, i);
    if (o == NULL) return -1;
    if (PyFloat_CheckExact(o)) {
        *out = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) return -1;
    *out = v;
    return 0;
}

static inline int set_double(PyObject *list, Py_ssize_t i, double v) {
    return set_item(list, i, PyFloat_FromDouble(v));
}

static inline int set_ssize(PyObject *list, Py_ssize_t i, Py_ssize_t v) {
    return set_item(list, i, PyLong_FromSsize_t(v));
}

/* list[i] += delta on an int list (Python: ``proc_busy[proc] += count``). */
static inline int add_ssize(PyObject *list, Py_ssize_t i, Py_ssize_t delta) {
    Py_ssize_t v;
    if (get_ssize(list, i, &v) < 0) return -1;
    return set_ssize(list, i, v + delta);
}

/* ``pool.free_count += delta`` */
static int add_free_count(PoolObject *self, Py_ssize_t delta) {
    PyObject *o = PyObject_GetAttr(self->pool, s_free_count);
    if (o == NULL) return -1;
    Py_ssize_t v = PyLong_AsSsize_t(o);
    Py_DECREF(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    PyObject *n = PyLong_FromSsize_t(v + delta);
    if (n == NULL) return -1;
    int rc = PyObject_SetAttr(self->pool, s_free_count, n);
    Py_DECREF(n);
    return rc;
}

/* ``for listener in listeners: listener.update(arg)`` */
static int update_all(PyObject *listeners, PyObject *arg) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(listeners); i++) {
        PyObject *listener = PyList_GET_ITEM(listeners, i);
        Py_INCREF(listener);
        PyObject *r = PyObject_CallMethodOneArg(listener, s_update, arg);
        Py_DECREF(listener);
        if (r == NULL) return -1;
        Py_DECREF(r);
    }
    return 0;
}

/* ``changed.update(cores)`` for a list of cores: a set's update with a list adds each one in
 * order, as PySet_Add does. */
static int add_all(PyObject *set, PyObject *cores) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(cores); i++) {
        if (PySet_Add(set, PyList_GET_ITEM(cores, i)) < 0) return -1;
    }
    return 0;
}

/* A processor's bandwidth demand summed in core order from 0.0 (resources._core_order_sum;
 * the unrolled sum of 4-core processors is the same additions in the same order). */
static int core_order_sum(PoolObject *self, Py_ssize_t proc, double *out) {
    PyObject *members = item(self->proc_cores, proc);
    if (members == NULL) return -1;
    double demand = 0.0;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(members); j++) {
        Py_ssize_t core = PyLong_AsSsize_t(PyList_GET_ITEM(members, j));
        if (core == -1 && PyErr_Occurred()) return -1;
        double bw;
        if (get_double(self->core_bw, core, &bw) < 0) return -1;
        demand += bw;
    }
    *out = demand;
    return 0;
}

/* Whether the insights logger is enabled for WARNING, asked at most once per settle and only
 * when an episode opens or closes (``log`` starts at -1: not asked yet). */
static int ask_log(PoolObject *self, int *log) {
    if (*log >= 0) return 0;
    PyObject *level = PyLong_FromLong(LOG_WARNING);
    if (level == NULL) return -1;
    PyObject *r = PyObject_CallMethodOneArg(self->logger, s_is_enabled_for, level);
    Py_DECREF(level);
    if (r == NULL) return -1;
    int t = PyObject_IsTrue(r);
    Py_DECREF(r);
    if (t < 0) return -1;
    *log = t;
    return 0;
}

static int append_to(PyObject *owner, PyObject *column, PyObject *value) {
    PyObject *array = PyObject_GetAttr(owner, column);
    if (array == NULL) return -1;
    PyObject *r = PyObject_CallMethodOneArg(array, s_append, value);
    Py_DECREF(array);
    if (r == NULL) return -1;
    Py_DECREF(r);
    return 0;
}

/* The episode part of CorePool.settle_taken and _settle_freed (inlined there in Python, as
 * _over_changed): ``proc`` starts (``over``) or stops being over-subscribed at ``now``. */
static int over_changed(PoolObject *self, PyObject *proc_o, Py_ssize_t proc, int over,
                        double demand, PyObject *now, int *log) {
    if (set_borrowed(self->over, proc, over ? Py_True : Py_False) < 0) return -1;
    if (ask_log(self, log) < 0) return -1;
    if (over) {
        PyObject *ends = PyObject_GetAttr(self->episodes, s_ends);
        if (ends == NULL) return -1;
        Py_ssize_t n = PyObject_Length(ends);
        Py_DECREF(ends);
        if (n < 0) return -1;
        PyObject *index = PyLong_FromSsize_t(n);
        if (index == NULL) return -1;
        int rc = PyDict_SetItem(self->open_episode, proc_o, index);
        Py_DECREF(index);
        if (rc < 0) return -1;
        if (append_to(self->episodes, s_procs, proc_o) < 0) return -1;
        if (append_to(self->episodes, s_starts, now) < 0) return -1;
        if (append_to(self->episodes, s_ends, self->open_end) < 0) return -1;
        if (*log) {
            PyObject *bw = item(self->proc_mem_bw, proc);
            if (bw == NULL) return -1;
            PyObject *d = PyFloat_FromDouble(demand);
            if (d == NULL) return -1;
            PyObject *r = PyObject_CallFunctionObjArgs(self->over_starts, now, proc_o, d, bw, NULL);
            Py_DECREF(d);
            if (r == NULL) return -1;
            Py_DECREF(r);
        }
    } else {
        /* episodes.ends[open_episode.pop(proc)] = now */
        PyObject *index = PyDict_GetItemWithError(self->open_episode, proc_o);
        if (index == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, proc_o);
            return -1;
        }
        Py_INCREF(index);
        if (PyDict_DelItem(self->open_episode, proc_o) < 0) {
            Py_DECREF(index);
            return -1;
        }
        PyObject *ends = PyObject_GetAttr(self->episodes, s_ends);
        if (ends == NULL) {
            Py_DECREF(index);
            return -1;
        }
        int rc = PyObject_SetItem(ends, index, now);
        Py_DECREF(ends);
        Py_DECREF(index);
        if (rc < 0) return -1;
        if (*log) {
            PyObject *r = PyObject_CallFunctionObjArgs(self->over_ends, now, proc_o, NULL);
            if (r == NULL) return -1;
            Py_DECREF(r);
        }
    }
    return 0;
}

/* Switch a processor's busy cores whose P-state differs from ``running`` (the loop over
 * ``proc_cores[proc]`` when the running state changed). */
static int switch_running(PoolObject *self, Py_ssize_t proc, long running) {
    PyObject *members = item(self->proc_cores, proc);
    if (members == NULL) return -1;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(members); j++) {
        PyObject *c_o = PyList_GET_ITEM(members, j);
        Py_ssize_t c = PyLong_AsSsize_t(c_o);
        if (c == -1 && PyErr_Occurred()) return -1;
        PyObject *job = item(self->core_job, c);
        if (job == NULL) return -1;
        if (job == Py_None) continue;
        Py_ssize_t state;
        if (get_ssize(self->pstate, c, &state) < 0) return -1;
        if (state != running) {
            if (set_ssize(self->pstate, c, running) < 0) return -1;
            if (PySet_Add(self->changed, c_o) < 0) return -1;
        }
    }
    return 0;
}

/* ``for c in cores: pstate[c] = state`` then ``changed.update(cores)`` */
static int switch_all(PoolObject *self, PyObject *cores, long state) {
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(cores); j++) {
        Py_ssize_t c = PyLong_AsSsize_t(PyList_GET_ITEM(cores, j));
        if (c == -1 && PyErr_Occurred()) return -1;
        if (set_ssize(self->pstate, c, state) < 0) return -1;
    }
    return add_all(self->changed, cores);
}

/* The processors of a ``{proc: cores}`` dict as Python orders them: ``sorted(d) if len(d) > 1
 * else list(d)``. */
static PyObject *sorted_keys(PyObject *d) {
    PyObject *procs = PyDict_Keys(d);
    if (procs == NULL) return NULL;
    if (PyList_GET_SIZE(procs) > 1 && PyList_Sort(procs) < 0) {
        Py_DECREF(procs);
        return NULL;
    }
    return procs;
}

/* ---- take_run and take --------------------------------------------------------------- */

static int take_cores(PoolObject *self, Py_ssize_t proc, PyObject *cores, Py_ssize_t count,
                      PyObject *job_id, PyObject *mem_o, PyObject *bw_o);

/* CorePool.take_run: the ``count`` lowest free cores of ``proc`` go to ``job_id``. The
 * demand and free memory are summed in locals and written once, as the Python does. Returns
 * the new list of cores taken. ``mem`` and ``mem_bw`` are the caller's float objects (stored
 * as they are in ``core_mem`` and ``core_bw``, like the Python). */
static PyObject *take_run_impl(PoolObject *self, Py_ssize_t proc, Py_ssize_t count,
                               PyObject *job_id, PyObject *mem_o, PyObject *bw_o) {
    PyObject *free = item(self->proc_free, proc);
    if (free == NULL) return NULL;
    if (!PyList_Check(free)) {
        PyErr_SetString(PyExc_TypeError, "proc_free must hold lists");
        return NULL;
    }
    Py_INCREF(free);
    /* cores = free[:count]; del free[:count] */
    PyObject *cores = PyList_GetSlice(free, 0, count);
    if (cores == NULL || PyList_SetSlice(free, 0, count, NULL) < 0) {
        Py_DECREF(free);
        Py_XDECREF(cores);
        return NULL;
    }
    Py_DECREF(free);
    if (take_cores(self, proc, cores, count, job_id, mem_o, bw_o) < 0) {
        Py_DECREF(cores);
        return NULL;
    }
    return cores;
}

/* The rest of CorePool.take_run (and of CorePool.take, ``cores`` being its one core), once
 * ``cores`` left their processor's free list: the free-core list, the per-core values, then
 * the demand and free memory summed in locals, as the Python does. */
static int take_cores(PoolObject *self, Py_ssize_t proc, PyObject *cores, Py_ssize_t count,
                      PyObject *job_id, PyObject *mem_o, PyObject *bw_o) {
    double mem = PyFloat_AS_DOUBLE(mem_o), mem_bw = PyFloat_AS_DOUBLE(bw_o);
    Py_ssize_t node, n = PyList_GET_SIZE(cores);
    double demand, free_mem;
    if (get_ssize(self->proc_node, proc, &node) < 0) goto fail;
    if (get_double(self->proc_demand, proc, &demand) < 0) goto fail;
    if (get_double(self->node_free_mem, node, &free_mem) < 0) goto fail;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *core_o = PyList_GET_ITEM(cores, j);
        Py_ssize_t core = PyLong_AsSsize_t(core_o);
        if (core == -1 && PyErr_Occurred()) goto fail;
        if (self->free_order) {
            /* index, last = free_index[core], free_cores.pop(); swap the last into its place */
            PyObject *fc = self->free_cores, *fi = self->free_index;
            PyObject *index = item(fi, core);
            Py_ssize_t size = PyList_GET_SIZE(fc);
            if (index == NULL) goto fail;
            if (size == 0) {
                PyErr_SetString(PyExc_IndexError, "pop from empty list");
                goto fail;
            }
            Py_INCREF(index);
            PyObject *last = PyList_GET_ITEM(fc, size - 1);
            Py_INCREF(last);
            if (PyList_SetSlice(fc, size - 1, size, NULL) < 0) {
                Py_DECREF(index);
                Py_DECREF(last);
                goto fail;
            }
            int differs = PyObject_RichCompareBool(last, core_o, Py_NE);
            int rc = differs < 0 ? -1 : 0;
            if (differs > 0) {
                Py_ssize_t at = PyLong_AsSsize_t(index), l = PyLong_AsSsize_t(last);
                if ((at == -1 || l == -1) && PyErr_Occurred())
                    rc = -1;
                else if (set_borrowed(fc, at, last) < 0 || set_borrowed(fi, l, index) < 0)
                    rc = -1;
            }
            Py_DECREF(index);
            Py_DECREF(last);
            if (rc < 0 || set_ssize(fi, core, -1) < 0) goto fail;
        }
        if (set_borrowed(self->core_job, core, job_id) < 0) goto fail;
        if (set_borrowed(self->core_mem, core, mem_o) < 0) goto fail;
        if (set_borrowed(self->core_bw, core, bw_o) < 0) goto fail;
        demand += mem_bw;
        free_mem -= mem;
    }
    if (set_double(self->proc_demand, proc, demand) < 0) goto fail;
    if (set_double(self->node_free_mem, node, free_mem) < 0) goto fail;
    if (add_ssize(self->proc_busy, proc, count) < 0) goto fail;
    if (add_ssize(self->node_busy, node, count) < 0) goto fail;
    if (add_free_count(self, -count) < 0) goto fail;
    if (mem < 0.0 || mem_bw < 0.0) { /* a key could improve: not for job records */
        PyObject *procs = Py_BuildValue("[n]", proc), *node_o = PyLong_FromSsize_t(node);
        PyObject *r = procs == NULL || node_o == NULL
                          ? NULL
                          : PyObject_CallMethodObjArgs(self->pool, s_gained, procs, node_o, NULL);
        Py_XDECREF(procs);
        Py_XDECREF(node_o);
        if (r == NULL) goto fail;
        Py_DECREF(r);
    }
    if (PyList_GET_SIZE(self->node_change_listeners)) {
        PyObject *node_o = PyLong_FromSsize_t(node);
        if (node_o == NULL) goto fail;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(self->node_change_listeners); i++) {
            /* listener.nodes.append(node) */
            PyObject *nodes = PyObject_GetAttr(PyList_GET_ITEM(self->node_change_listeners, i),
                                               s_nodes);
            int rc = nodes == NULL ? -1 : PyList_Check(nodes) ? PyList_Append(nodes, node_o) : -2;
            if (rc == -2) {
                PyObject *r = PyObject_CallMethodOneArg(nodes, s_append, node_o);
                rc = r == NULL ? -1 : 0;
                Py_XDECREF(r);
            }
            Py_XDECREF(nodes);
            if (rc < 0) {
                Py_DECREF(node_o);
                goto fail;
            }
        }
        Py_DECREF(node_o);
    }
    return 0;
fail:
    return -1;
}

/* Call the reference method ``name`` of the pool's class with the pool and ``args``. */
static PyObject *reference(PoolObject *self, PyObject *name, PyObject *const *args,
                           Py_ssize_t nargs) {
    PyObject *method = PyObject_GetAttr(self->reference, name);
    if (method == NULL) return NULL;
    PyObject *stack[8];
    stack[0] = self->pool;
    for (Py_ssize_t i = 0; i < nargs && i < 7; i++) stack[i + 1] = args[i];
    PyObject *r = PyObject_Vectorcall(method, stack, nargs + 1, NULL);
    Py_DECREF(method);
    return r;
}

/* Pool.take_run(proc, count, job_id, mem, mem_bw): CorePool.take_run. Other argument types
 * than the job records' (ints, floats) go to the Python method. */
static PyObject *Pool_take_run(PoolObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "take_run(proc, count, job_id, mem, mem_bw)");
        return NULL;
    }
    Py_ssize_t proc = PyLong_Check(args[0]) ? PyLong_AsSsize_t(args[0]) : -1;
    Py_ssize_t count = PyLong_Check(args[1]) ? PyLong_AsSsize_t(args[1]) : -1;
    if (PyErr_Occurred()) PyErr_Clear();
    if (proc < 0 || proc >= PyList_GET_SIZE(self->proc_free) || count < 0 ||
        !PyFloat_CheckExact(args[3]) || !PyFloat_CheckExact(args[4]))
        return reference(self, s_take_run, args, nargs);
    return take_run_impl(self, proc, count, args[2], args[3], args[4]);
}

/* Pool.take(core, job_id, mem, mem_bw): CorePool.take, one core (a levelling policy's
 * common pick, or a core a scheduler chose). A core not free, or arguments of other types,
 * go to the Python method (which raises or stores them as they are). */
static PyObject *Pool_take(PoolObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "take(core, job_id, mem, mem_bw)");
        return NULL;
    }
    Py_ssize_t core = PyLong_Check(args[0]) ? PyLong_AsSsize_t(args[0]) : -1, proc = -1;
    if (core == -1 && PyErr_Occurred()) PyErr_Clear();
    PyObject *free = NULL;
    Py_ssize_t at = -1;
    if (core >= 0 && core < PyList_GET_SIZE(self->core_proc) && PyFloat_CheckExact(args[2]) &&
        PyFloat_CheckExact(args[3])) {
        if (get_ssize(self->core_proc, core, &proc) < 0) return NULL;
        free = item(self->proc_free, proc);
        if (free == NULL) return NULL;
        /* if free and free[0] == core: free.pop(0) else: free.remove(core) */
        for (Py_ssize_t j = 0; PyList_Check(free) && j < PyList_GET_SIZE(free); j++) {
            PyObject *c = PyList_GET_ITEM(free, j);
            if (PyLong_CheckExact(c) && PyLong_AsSsize_t(c) == core) {
                at = j;
                break;
            }
            if (PyErr_Occurred()) return NULL;
        }
    }
    if (at < 0) return reference(self, s_take, args, nargs);
    PyObject *cores = PyList_GetSlice(free, at, at + 1);
    if (cores == NULL) return NULL;
    int rc = PyList_SetSlice(free, at, at + 1, NULL);
    if (rc == 0) rc = take_cores(self, proc, cores, 1, args[1], args[2], args[3]);
    Py_DECREF(cores);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

/* Pool.settle(cores, now): CorePool.settle, that is _settle on the cores grouped by
 * processor (in the order met). Its episodes go through _over_changed in Python, which asks
 * the logger at each change: here too (``log`` asked afresh each time). */
static PyObject *Pool_settle(PoolObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "settle(cores, now)");
        return NULL;
    }
    PyObject *now = args[1];
    PyObject *seq = PySequence_Fast(args[0], "settle: cores must be iterable");
    if (seq == NULL) return NULL;
    PyObject *touched = PyDict_New(), *procs = NULL;
    if (touched == NULL) goto fail;
    /* touched: {proc: [cores]} */
    for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(seq); j++) {
        PyObject *c = PySequence_Fast_GET_ITEM(seq, j);
        Py_ssize_t core = PyLong_AsSsize_t(c);
        if (core == -1 && PyErr_Occurred()) goto fail;
        PyObject *proc_o = item(self->core_proc, core);
        if (proc_o == NULL) goto fail;
        PyObject *group = PyDict_GetItemWithError(touched, proc_o);
        if (group == NULL) {
            if (PyErr_Occurred()) goto fail;
            group = PyList_New(1);
            if (group == NULL) goto fail;
            Py_INCREF(c);
            PyList_SET_ITEM(group, 0, c);
            int rc = PyDict_SetItem(touched, proc_o, group);
            Py_DECREF(group);
            if (rc < 0) goto fail;
        } else if (PyList_Append(group, c) < 0) {
            goto fail;
        }
    }
    if ((procs = sorted_keys(touched)) == NULL) goto fail;
    if (update_all(self->demand_listeners, procs) < 0) goto fail;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(procs); i++) {
        PyObject *proc_o = PyList_GET_ITEM(procs, i);
        Py_ssize_t proc = PyLong_AsSsize_t(proc_o), busy, idle_now, run_now;
        if (proc == -1 && PyErr_Occurred()) goto fail;
        double demand, limit;
        long idle;
        if (get_ssize(self->proc_busy, proc, &busy) < 0) goto fail;
        if (busy) {
            if (core_order_sum(self, proc, &demand) < 0) goto fail;
            idle = P2;
        } else { /* every core is free, with 0.0: the sum is 0.0 */
            demand = 0.0;
            idle = P3;
        }
        if (set_double(self->proc_demand, proc, demand) < 0) goto fail;
        if (get_double(self->bw_limit, proc, &limit) < 0) goto fail;
        int over = demand > limit;
        long running = over ? P1 : P0;
        if (get_ssize(self->idle_state, proc, &idle_now) < 0) goto fail;
        if (idle != idle_now) {
            if (set_ssize(self->idle_state, proc, idle) < 0) goto fail;
            PyObject *free = item(self->proc_free, proc);
            if (free == NULL) goto fail;
            Py_INCREF(free);
            int rc = switch_all(self, free, idle);
            Py_DECREF(free);
            if (rc < 0) goto fail;
        }
        if (get_ssize(self->run_state, proc, &run_now) < 0) goto fail;
        if (running != run_now) {
            if (set_ssize(self->run_state, proc, running) < 0) goto fail;
            if (switch_running(self, proc, running) < 0) goto fail;
        }
        /* for c in touched[proc]: idle if free else running, when it differs */
        PyObject *group = PyDict_GetItemWithError(touched, proc_o);
        if (group == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, proc_o);
            goto fail;
        }
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(group); j++) {
            PyObject *c_o = PyList_GET_ITEM(group, j);
            Py_ssize_t c = PyLong_AsSsize_t(c_o), state;
            if (c == -1 && PyErr_Occurred()) goto fail;
            PyObject *job = item(self->core_job, c);
            if (job == NULL) goto fail;
            long want = job == Py_None ? idle : running;
            if (get_ssize(self->pstate, c, &state) < 0) goto fail;
            if (want != state) {
                if (set_ssize(self->pstate, c, want) < 0) goto fail;
                if (PySet_Add(self->changed, c_o) < 0) goto fail;
            }
        }
        PyObject *was = item(self->over, proc);
        if (was == NULL) goto fail;
        int over_was = PyObject_IsTrue(was);
        if (over_was < 0) goto fail;
        int log = -1;
        if (over != over_was && over_changed(self, proc_o, proc, over, demand, now, &log) < 0)
            goto fail;
    }
    Py_DECREF(procs);
    Py_DECREF(touched);
    Py_DECREF(seq);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(procs);
    Py_XDECREF(touched);
    Py_DECREF(seq);
    return NULL;
}

/* ---- release and its settle ---------------------------------------------------------- */

/* CorePool._settle_freed: the cores just freed, by processor, go back to their processors'
 * free lists and busy counts, then are settled. */
static int settle_freed_impl(PoolObject *self, PyObject *freed, PyObject *now) {
    PyObject *procs = sorted_keys(freed);
    if (procs == NULL) return -1;
    int log = -1;
    Py_ssize_t count = 0;
    if (update_all(self->demand_listeners, procs) < 0) goto fail;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(procs); i++) {
        PyObject *proc_o = PyList_GET_ITEM(procs, i);
        Py_ssize_t proc = PyLong_AsSsize_t(proc_o), busy_now;
        if (proc == -1 && PyErr_Occurred()) goto fail;
        PyObject *group = PyDict_GetItemWithError(freed, proc_o);
        if (group == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, proc_o);
            goto fail;
        }
        Py_ssize_t n = PyList_GET_SIZE(group);
        count += n;
        if (get_ssize(self->proc_busy, proc, &busy_now) < 0) goto fail;
        busy_now -= n;
        if (set_ssize(self->proc_busy, proc, busy_now) < 0) goto fail;
        PyObject *free = item(self->proc_free, proc);
        if (free == NULL) goto fail;
        Py_INCREF(free);
        /* free += group; free.sort() */
        if (PyList_SetSlice(free, PY_SSIZE_T_MAX, PY_SSIZE_T_MAX, group) < 0 ||
            PyList_Sort(free) < 0) {
            Py_DECREF(free);
            goto fail;
        }
        double demand;
        long idle;
        if (busy_now) {
            if (core_order_sum(self, proc, &demand) < 0) {
                Py_DECREF(free);
                goto fail;
            }
            idle = P2;
        } else { /* every core is free, with 0.0: the sum is 0.0 */
            demand = 0.0;
            idle = P3;
        }
        double limit = 0.0;
        Py_ssize_t idle_now = 0, run_now = 0;
        int rc = set_double(self->proc_demand, proc, demand);
        if (rc == 0) rc = get_double(self->bw_limit, proc, &limit);
        if (rc == 0) rc = get_ssize(self->idle_state, proc, &idle_now);
        if (rc == 0) {
            if (idle != idle_now) {
                rc = set_ssize(self->idle_state, proc, idle);
                if (rc == 0) rc = switch_all(self, free, idle);
            } else {
                rc = switch_all(self, group, idle);
            }
        }
        Py_DECREF(free);
        if (rc < 0) goto fail;
        int over = demand > limit;
        long running = over ? P1 : P0;
        if (get_ssize(self->run_state, proc, &run_now) < 0) goto fail;
        if (running != run_now) {
            if (set_ssize(self->run_state, proc, running) < 0) goto fail;
            if (busy_now && switch_running(self, proc, running) < 0) goto fail;
        }
        PyObject *was = item(self->over, proc);
        if (was == NULL) goto fail;
        int over_was = PyObject_IsTrue(was);
        if (over_was < 0) goto fail;
        if (over != over_was &&
            over_changed(self, proc_o, proc, over, demand, now, &log) < 0)
            goto fail;
    }
    Py_DECREF(procs);
    return add_free_count(self, count);
fail:
    Py_DECREF(procs);
    return -1;
}

/* Write back the node of the current run of CorePool.release's loop. */
static int release_node_done(PoolObject *self, Py_ssize_t node, Py_ssize_t left,
                             double free_mem, int gained, PyObject *mem_nodes) {
    if (set_ssize(self->node_busy, node, left) < 0) return -1;
    if (set_double(self->node_free_mem, node, free_mem) < 0) return -1;
    if (gained) {
        PyObject *key = PyLong_FromSsize_t(node);
        if (key == NULL) return -1;
        int rc = PyDict_SetItem(mem_nodes, key, Py_None);
        Py_DECREF(key);
        return rc;
    }
    return 0;
}

/* CorePool.release: free the cores of a finished job (give() per core, inlined, with the
 * node's figures in locals for each run of cores on one node) and settle them. */
static int release_impl(PoolObject *self, PyObject *cores, PyObject *now) {
    PyObject *touched = NULL, *nodes = NULL, *mem_nodes = NULL, *node_o = NULL;
    Py_ssize_t n = PyList_GET_SIZE(cores);
    int ok = -1;
    if (self->free_order) {
        /* free_cores.extend(cores); each one's position in free_index */
        Py_ssize_t position = PyList_GET_SIZE(self->free_cores);
        if (PyList_SetSlice(self->free_cores, PY_SSIZE_T_MAX, PY_SSIZE_T_MAX, cores) < 0)
            return -1;
        for (Py_ssize_t j = 0; j < n; j++) {
            Py_ssize_t core = PyLong_AsSsize_t(PyList_GET_ITEM(cores, j));
            if (core == -1 && PyErr_Occurred()) return -1;
            if (set_ssize(self->free_index, core, position) < 0) return -1;
            position++;
        }
    }
    touched = PyDict_New();
    nodes = PyDict_New();
    mem_nodes = PyDict_New();
    if (touched == NULL || nodes == NULL || mem_nodes == NULL) goto done;
    Py_ssize_t last_proc = -1, node = -1, left = 0;
    double free_mem = 0.0, capacity = 0.0;
    int gained = 0;
    PyObject *group = NULL; /* borrowed from touched */
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *core_o = PyList_GET_ITEM(cores, j);
        Py_ssize_t core = PyLong_AsSsize_t(core_o), proc;
        if (core == -1 && PyErr_Occurred()) goto done;
        if (get_ssize(self->core_proc, core, &proc) < 0) goto done;
        if (proc != last_proc) { /* a job's cores come in runs per processor */
            Py_ssize_t next_node;
            last_proc = proc;
            if (get_ssize(self->proc_node, proc, &next_node) < 0) goto done;
            if (next_node != node) {
                if (node >= 0 &&
                    release_node_done(self, node, left, free_mem, gained, mem_nodes) < 0)
                    goto done;
                node = next_node;
                Py_XSETREF(node_o, PyLong_FromSsize_t(node));
                if (node_o == NULL || PyDict_SetItem(nodes, node_o, Py_None) < 0) goto done;
                if (get_ssize(self->node_busy, node, &left) < 0) goto done;
                if (get_double(self->node_free_mem, node, &free_mem) < 0) goto done;
                if (get_double(self->node_capacity, node, &capacity) < 0) goto done;
                gained = 0;
            }
            PyObject *proc_o = PyList_GET_ITEM(self->core_proc, core);
            group = PyDict_GetItemWithError(touched, proc_o);
            if (group == NULL) {
                if (PyErr_Occurred()) goto done;
                PyObject *fresh = PyList_New(0);
                if (fresh == NULL) goto done;
                int rc = PyDict_SetItem(touched, proc_o, fresh);
                Py_DECREF(fresh);
                if (rc < 0) goto done;
                group = fresh;
            }
        }
        if (PyList_Append(group, core_o) < 0) goto done;
        if (set_borrowed(self->core_job, core, Py_None) < 0) goto done;
        double mem;
        if (get_double(self->core_mem, core, &mem) < 0) goto done;
        if (set_borrowed(self->core_mem, core, self->zero) < 0) goto done;
        if (set_borrowed(self->core_bw, core, self->zero) < 0) goto done;
        /* the node's free memory gains the core's, or is its exact capacity once idle */
        left -= 1;
        if (left) {
            free_mem += mem;
        } else {
            if (capacity != free_mem) gained = 1;
            free_mem = capacity;
        }
        if (mem != 0.0) gained = 1;
    }
    if (node >= 0 && release_node_done(self, node, left, free_mem, gained, mem_nodes) < 0)
        goto done;
    if (update_all(self->gain_listeners, touched) < 0) goto done;
    if (update_all(self->node_change_listeners, nodes) < 0) goto done;
    if (PyDict_GET_SIZE(mem_nodes)) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(self->node_gain_listeners); i++) {
            PyObject *listener = PyList_GET_ITEM(self->node_gain_listeners, i);
            Py_ssize_t pos = 0;
            PyObject *key, *value;
            Py_INCREF(listener);
            while (PyDict_Next(mem_nodes, &pos, &key, &value)) {
                Py_ssize_t k = PyLong_AsSsize_t(key);
                PyObject *procs = item(self->node_procs, k);
                PyObject *r = procs == NULL ? NULL
                                            : PyObject_CallMethodOneArg(listener, s_update, procs);
                if (r == NULL) {
                    Py_DECREF(listener);
                    goto done;
                }
                Py_DECREF(r);
            }
            Py_DECREF(listener);
        }
    }
    ok = settle_freed_impl(self, touched, now);
done:
    Py_XDECREF(node_o);
    Py_XDECREF(touched);
    Py_XDECREF(nodes);
    Py_XDECREF(mem_nodes);
    return ok;
}

/* Whether every core of ``cores`` is an int in range and holds an exact float memory and
 * bandwidth (what the C release reads as it goes): anything else goes to the Python. */
static int plain_cores(PoolObject *self, PyObject *cores) {
    Py_ssize_t nb = PyList_GET_SIZE(self->core_proc);
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(cores); j++) {
        PyObject *o = PyList_GET_ITEM(cores, j);
        if (!PyLong_CheckExact(o)) return 0;
        Py_ssize_t core = PyLong_AsSsize_t(o);
        if (core == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        if (core < 0 || core >= nb || core >= PyList_GET_SIZE(self->core_mem) ||
            !PyFloat_CheckExact(PyList_GET_ITEM(self->core_mem, core)))
            return 0;
    }
    return 1;
}

/* Pool.release(cores, now): CorePool.release. */
static PyObject *Pool_release(PoolObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "release(cores, now)");
        return NULL;
    }
    PyObject *cores = PySequence_List(args[0]);
    if (cores == NULL) return NULL;
    int rc;
    if (plain_cores(self, cores)) {
        rc = release_impl(self, cores, args[1]);
    } else {
        PyObject *call[2] = {cores, args[1]};
        PyObject *r = reference(self, s_release, call, 2);
        rc = r == NULL ? -1 : 0;
        Py_XDECREF(r);
    }
    Py_DECREF(cores);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

/* ---- settle_taken -------------------------------------------------------------------- */

/* CorePool.settle_taken: settle the cores just taken, given by processor. */
static int settle_taken_impl(PoolObject *self, PyObject *taken, PyObject *now) {
    PyObject *procs = sorted_keys(taken);
    if (procs == NULL) return -1;
    int log = -1;
    if (update_all(self->demand_listeners, procs) < 0) goto fail;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(procs); i++) {
        PyObject *proc_o = PyList_GET_ITEM(procs, i);
        Py_ssize_t proc = PyLong_AsSsize_t(proc_o), busy;
        if (proc == -1 && PyErr_Occurred()) goto fail;
        PyObject *group = PyDict_GetItemWithError(taken, proc_o);
        if (group == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, proc_o);
            goto fail;
        }
        if (!PyList_Check(group)) {
            PyErr_SetString(PyExc_TypeError, "settle_taken: the cores must be lists");
            goto fail;
        }
        Py_INCREF(group);
        double demand = 0.0, limit = 0.0;
        Py_ssize_t idle_now = 0, run_now = 0;
        int rc = get_ssize(self->proc_busy, proc, &busy);
        if (rc == 0) {
            if (busy == PyList_GET_SIZE(group)) { /* wholly free until now: the sum is kept */
                rc = get_double(self->proc_demand, proc, &demand);
            } else {
                rc = core_order_sum(self, proc, &demand);
                if (rc == 0) rc = set_double(self->proc_demand, proc, demand);
            }
        }
        if (rc == 0) rc = get_double(self->bw_limit, proc, &limit);
        int over = demand > limit;
        long running = over ? P1 : P0;
        if (rc == 0) rc = get_ssize(self->idle_state, proc, &idle_now);
        if (rc == 0 && idle_now != P2) { /* a core is busy: the idle state is P2 */
            rc = set_ssize(self->idle_state, proc, P2);
            PyObject *free = rc == 0 ? item(self->proc_free, proc) : NULL;
            if (free == NULL) {
                rc = -1;
            } else {
                Py_INCREF(free);
                rc = switch_all(self, free, P2);
                Py_DECREF(free);
            }
        }
        if (rc == 0) rc = get_ssize(self->run_state, proc, &run_now);
        if (rc == 0) {
            if (running != run_now) {
                rc = set_ssize(self->run_state, proc, running);
                if (rc == 0) rc = switch_running(self, proc, running);
            } else {
                rc = switch_all(self, group, running);
            }
        }
        Py_DECREF(group);
        if (rc < 0) goto fail;
        PyObject *was = item(self->over, proc);
        if (was == NULL) goto fail;
        int over_was = PyObject_IsTrue(was);
        if (over_was < 0) goto fail;
        if (over != over_was &&
            over_changed(self, proc_o, proc, over, demand, now, &log) < 0)
            goto fail;
    }
    Py_DECREF(procs);
    return 0;
fail:
    Py_DECREF(procs);
    return -1;
}

/* Pool.settle_taken(taken, now): CorePool.settle_taken. */
static PyObject *Pool_settle_taken(PoolObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "settle_taken(taken, now)");
        return NULL;
    }
    if (!PyDict_Check(args[0])) return reference(self, s_settle_taken, args, nargs);
    if (settle_taken_impl(self, args[0], args[1]) < 0) return NULL;
    Py_RETURN_NONE;
}

/* ---- drain --------------------------------------------------------------------------- */

/* Pool.drain(): CorePool.drain, the net P-state changes since the last drain, one
 * SetResourceState(HostIds(cores), state) per target state in ascending state order. */
static PyObject *Pool_drain(PoolObject *self, PyObject *Py_UNUSED(ignored)) {
    if (PySet_GET_SIZE(self->changed) == 0) return PyList_New(0);
    PyObject *groups[4] = {NULL, NULL, NULL, NULL};
    PyObject *decisions = NULL;
    PyObject *cores = PySequence_List(self->changed);
    if (cores == NULL || PyList_Sort(cores) < 0) goto done;
    for (int s = 0; s < 4; s++) {
        if ((groups[s] = PyList_New(0)) == NULL) goto done;
    }
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(cores); j++) {
        PyObject *core_o = PyList_GET_ITEM(cores, j);
        Py_ssize_t core = PyLong_AsSsize_t(core_o), state, sent;
        if (core == -1 && PyErr_Occurred()) goto done;
        if (get_ssize(self->pstate, core, &state) < 0) goto done;
        if (get_ssize(self->emitted, core, &sent) < 0) goto done;
        if (state != sent) {
            if (state < 0 || state > 3) {
                PyErr_SetString(PyExc_IndexError, "P-state out of range");
                goto done;
            }
            if (set_ssize(self->emitted, core, state) < 0) goto done;
            if (PyList_Append(groups[state], core_o) < 0) goto done;
        }
    }
    if (PySet_Clear(self->changed) < 0) goto done;
    if ((decisions = PyList_New(0)) == NULL) goto done;
    for (long s = 0; s < 4; s++) {
        if (PyList_GET_SIZE(groups[s]) == 0) continue;
        PyObject *ids = PyObject_CallOneArg(self->host_ids, groups[s]);
        if (ids == NULL) goto fail;
        PyObject *state = PyLong_FromLong(s);
        if (state == NULL) {
            Py_DECREF(ids);
            goto fail;
        }
        PyObject *decision = PyObject_CallFunctionObjArgs(self->set_resource_state, ids, state,
                                                          NULL);
        Py_DECREF(ids);
        Py_DECREF(state);
        if (decision == NULL) goto fail;
        int rc = PyList_Append(decisions, decision);
        Py_DECREF(decision);
        if (rc < 0) goto fail;
    }
    goto done;
fail:
    Py_CLEAR(decisions);
done:
    Py_XDECREF(cores);
    for (int s = 0; s < 4; s++) Py_XDECREF(groups[s]);
    return decisions;
}

/* ---- the ranked walk of the resource manager ----------------------------------------- */

/* resource_manager._memory_run: how many of ``count`` cores of one node its ``spare`` MB
 * admit for tasks of ``mem`` MB, tested in take's float order. */
static Py_ssize_t memory_run(Py_ssize_t count, double spare, double mem, double need) {
    spare -= mem;
    Py_ssize_t run = 1;
    while (run < count && spare >= need) {
        spare -= mem;
        run += 1;
    }
    return run;
}

/* The first part of _RankedTree.allocate: the processors that got a free core back since the
 * last allocation (``tree.gained``) go back into ``ranks`` (one sort, or an insort each). */
static int merge_gained(PoolObject *self, PyObject *tree, PyObject *ranks, PyObject *listed,
                        Py_ssize_t sort_back) {
    PyObject *gained = PyObject_GetAttr(tree, s_gained_set);
    if (gained == NULL) return -1;
    PyObject *back = NULL, *rank = NULL, *iter = NULL, *p;
    int ok = -1;
    if (!PySet_Check(gained)) {
        PyErr_SetString(PyExc_TypeError, "tree.gained must be a set");
        goto done;
    }
    if (PySet_GET_SIZE(gained) == 0) {
        ok = 0;
        goto done;
    }
    /* back = [p for p in gained if not listed[p] and free[p]] */
    if ((back = PyList_New(0)) == NULL || (iter = PyObject_GetIter(gained)) == NULL) goto done;
    while ((p = PyIter_Next(iter)) != NULL) {
        Py_ssize_t proc = PyLong_AsSsize_t(p);
        PyObject *is_listed = proc == -1 && PyErr_Occurred() ? NULL : item(listed, proc);
        PyObject *free = is_listed == NULL ? NULL : item(self->proc_free, proc);
        int take = -1;
        if (free != NULL) {
            int l = PyObject_IsTrue(is_listed);
            take = l < 0 ? -1 : (!l && PyList_Check(free) && PyList_GET_SIZE(free) > 0);
        }
        if (take > 0 && PyList_Append(back, p) < 0) take = -1;
        Py_DECREF(p);
        if (take < 0) goto done;
    }
    if (PyErr_Occurred()) goto done;
    if (PySet_Clear(gained) < 0) goto done;
    Py_ssize_t nb = PyList_GET_SIZE(back);
    if (nb) {
        if ((rank = PyObject_GetAttr(tree, s_rank)) == NULL) goto done;
        if (!PyList_Check(rank)) {
            PyErr_SetString(PyExc_TypeError, "tree.rank must be a list");
            goto done;
        }
        for (Py_ssize_t j = 0; j < nb; j++) {
            Py_ssize_t proc = PyLong_AsSsize_t(PyList_GET_ITEM(back, j));
            if (proc == -1 && PyErr_Occurred()) goto done;
            if (set_borrowed(listed, proc, Py_True) < 0) goto done;
        }
        if (nb * sort_back > PyList_GET_SIZE(ranks)) {
            /* a short list: one sort merges them in */
            for (Py_ssize_t j = 0; j < nb; j++) {
                Py_ssize_t proc = PyLong_AsSsize_t(PyList_GET_ITEM(back, j));
                PyObject *r = item(rank, proc);
                if (r == NULL || PyList_Append(ranks, r) < 0) goto done;
            }
            if (PyList_Sort(ranks) < 0) goto done;
        } else { /* a long one: an insort (bisect right) each */
            for (Py_ssize_t j = 0; j < nb; j++) {
                Py_ssize_t proc = PyLong_AsSsize_t(PyList_GET_ITEM(back, j));
                PyObject *r = item(rank, proc);
                if (r == NULL) goto done;
                Py_INCREF(r);
                Py_ssize_t lo = 0, hi = PyList_GET_SIZE(ranks);
                while (lo < hi) {
                    Py_ssize_t mid = lo + (hi - lo) / 2;
                    int less = PyObject_RichCompareBool(r, PyList_GET_ITEM(ranks, mid), Py_LT);
                    if (less < 0) {
                        Py_DECREF(r);
                        goto done;
                    }
                    if (less)
                        hi = mid;
                    else
                        lo = mid + 1;
                }
                int rc = PyList_Insert(ranks, lo, r);
                Py_DECREF(r);
                if (rc < 0) goto done;
            }
        }
    }
    ok = 0;
done:
    Py_DECREF(gained);
    Py_XDECREF(back);
    Py_XDECREF(rank);
    Py_XDECREF(iter);
    return ok;
}

/* ``value >= threshold`` as Python compares them: a float as a C double (the same IEEE
 * comparison: NaN never, -inf only with -inf), anything else through the object comparison
 * (an int is compared exactly, not as its nearest double). 1, 0, or -1 on error. */
static inline int at_least(PyObject *value, double threshold, PyObject *threshold_o) {
    if (PyFloat_CheckExact(value)) return PyFloat_AS_DOUBLE(value) >= threshold;
    return PyObject_RichCompareBool(value, threshold_o, Py_GE);
}

/* _segment.MaxTree.leftmost_from(start, threshold) on the tree's list ``slots`` (2 * size
 * values, the root at 1): the lowest slot >= start whose value is >= threshold, -1 for None,
 * -2 on error. */
static Py_ssize_t leftmost_from(PyObject *slots, Py_ssize_t size, Py_ssize_t start,
                                double threshold, PyObject *threshold_o) {
    if (start >= size) return -1;
    Py_ssize_t i = start + size;
    PyObject *v = item(slots, i);
    int ge = v == NULL ? -1 : at_least(v, threshold, threshold_o);
    if (ge < 0) return -2;
    if (ge) return start;
    while (1) {
        while (i & 1) i >>= 1; /* a right child: its right neighbour is under an ancestor */
        if (!i) return -1;
        i += 1;
        v = item(slots, i);
        ge = v == NULL ? -1 : at_least(v, threshold, threshold_o);
        if (ge < 0) return -2;
        if (ge) break;
    }
    while (i < size) {
        i *= 2;
        v = item(slots, i);
        ge = v == NULL ? -1 : at_least(v, threshold, threshold_o);
        if (ge < 0) return -2;
        if (!ge) i += 1;
    }
    return i - size;
}

/* ``a <op> b`` as Python's operator gives it: two floats as C doubles (``==`` too: no identity
 * shortcut, a NaN is unequal to itself), anything else through the object comparison. 1, 0,
 * or -1 on error. */
static inline int compare(PyObject *a, PyObject *b, int op) {
    if (PyFloat_CheckExact(a) && PyFloat_CheckExact(b)) {
        double x = PyFloat_AS_DOUBLE(a), y = PyFloat_AS_DOUBLE(b);
        switch (op) {
            case Py_EQ: return x == y;
            case Py_LT: return x < y;
            case Py_GT: return x > y;
            default: return x >= y;
        }
    }
    PyObject *r = PyObject_RichCompare(a, b, op);
    if (r == NULL) return -1;
    int t = PyObject_IsTrue(r);
    Py_DECREF(r);
    return t;
}

/* _segment.MaxTree.set_many for one slot: store ``value`` (borrowed) in ``slot``; a value that
 * grew raises its ancestors up to the first one already at least as large, one that fell
 * recomputes them from their children until one is unchanged. */
static int set_slot(PyObject *slots, Py_ssize_t size, Py_ssize_t slot, PyObject *value) {
    Py_ssize_t i = slot + size;
    PyObject *old = item(slots, i);
    if (old == NULL) return -1;
    Py_INCREF(old);
    int same = compare(old, value, Py_EQ);
    int grew = same == 0 ? compare(value, old, Py_GT) : 0;
    Py_DECREF(old);
    if (same < 0 || grew < 0) return -1;
    if (same) return 0;
    if (set_borrowed(slots, i, value) < 0) return -1;
    i >>= 1;
    if (grew) {
        while (i) {
            PyObject *v = item(slots, i);
            int lower = v == NULL ? -1 : compare(v, value, Py_LT);
            if (lower < 0) return -1;
            if (!lower) break;
            if (set_borrowed(slots, i, value) < 0) return -1;
            i >>= 1;
        }
        return 0;
    }
    while (i) {
        PyObject *left = item(slots, 2 * i), *right = item(slots, 2 * i + 1), *v = item(slots, i);
        if (left == NULL || right == NULL || v == NULL) return -1;
        Py_INCREF(left);
        Py_INCREF(right);
        Py_INCREF(v);
        int ge = compare(left, right, Py_GE);
        PyObject *best = ge > 0 ? left : right;
        int same_best = ge < 0 ? -1 : compare(v, best, Py_EQ);
        int rc = same_best < 0 ? -1 : same_best ? 1 : set_borrowed(slots, i, best);
        Py_DECREF(left);
        Py_DECREF(right);
        Py_DECREF(v);
        if (rc != 0) return rc < 0 ? -1 : 0;
        i >>= 1;
    }
    return 0;
}

/* _RankedTree.refresh: the slot of every processor in ``dirty`` (its node's free memory, or
 * -inf when it has no free core) written, in the set's order, once all are read; then
 * ``dirty`` is cleared, as the Python does before its set_many. */
static int refresh_tree(PoolObject *self, PyObject *tree, PyObject *dirty, PyObject *slots,
                        Py_ssize_t size) {
    PyObject *rank = PyObject_GetAttr(tree, s_rank), *iter = NULL, *pairs = NULL, *p;
    int ok = -1;
    if (rank == NULL) return -1;
    if (!PyList_Check(rank)) {
        PyErr_SetString(PyExc_TypeError, "tree.rank must be a list");
        goto done;
    }
    /* pairs: slot, value, slot, value, ... */
    if ((pairs = PyList_New(0)) == NULL || (iter = PyObject_GetIter(dirty)) == NULL) goto done;
    while ((p = PyIter_Next(iter)) != NULL) {
        Py_ssize_t proc = PyLong_AsSsize_t(p), r, node;
        Py_DECREF(p);
        if (proc == -1 && PyErr_Occurred()) goto done;
        if (get_ssize(rank, proc, &r) < 0) goto done;
        if (r < 0) continue;
        PyObject *free = item(self->proc_free, proc), *value;
        if (free == NULL) goto done;
        int has = PyObject_IsTrue(free);
        if (has < 0) goto done;
        if (has) {
            if (get_ssize(self->proc_node, proc, &node) < 0) goto done;
            if ((value = item(self->node_free_mem, node)) == NULL) goto done;
            Py_INCREF(value);
        } else if ((value = PyFloat_FromDouble(-Py_HUGE_VAL)) == NULL) {
            goto done;
        }
        PyObject *slot = PyLong_FromSsize_t(r);
        int rc = slot == NULL ? -1 : PyList_Append(pairs, slot);
        if (rc == 0) rc = PyList_Append(pairs, value);
        Py_XDECREF(slot);
        Py_DECREF(value);
        if (rc < 0) goto done;
    }
    if (PyErr_Occurred() || PySet_Clear(dirty) < 0) goto done;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(pairs); k += 2) {
        Py_ssize_t slot = PyLong_AsSsize_t(PyList_GET_ITEM(pairs, k));
        if (set_slot(slots, size, slot, PyList_GET_ITEM(pairs, k + 1)) < 0) goto done;
    }
    ok = 0;
done:
    Py_DECREF(rank);
    Py_XDECREF(iter);
    Py_XDECREF(pairs);
    return ok;
}

/* ``tree.nb_tree += 1`` */
static int count_tree_sweep(PyObject *tree) {
    PyObject *nb = PyObject_GetAttr(tree, s_nb_tree);
    if (nb == NULL) return -1;
    PyObject *one = PyLong_FromLong(1);
    PyObject *next = one == NULL ? NULL : PyNumber_Add(nb, one);
    Py_DECREF(nb);
    Py_XDECREF(one);
    if (next == NULL) return -1;
    int rc = PyObject_SetAttr(tree, s_nb_tree, next);
    Py_DECREF(next);
    return rc;
}

/* ``left = tree._tree_sweep(start, job_id, left, mem, mem_bw, taken)``: the Python sweep,
 * for a tree whose parts are not the lists and set tree_sweep reads. */
static int python_sweep(PyObject *tree, Py_ssize_t start, PyObject *job_id, Py_ssize_t *left,
                        PyObject *mem_o, PyObject *bw_o, PyObject *taken) {
    PyObject *from = PyLong_FromSsize_t(start), *tasks = PyLong_FromSsize_t(*left);
    PyObject *r = from == NULL || tasks == NULL
                      ? NULL
                      : PyObject_CallMethodObjArgs(tree, s_tree_sweep, from, job_id, tasks, mem_o,
                                                   bw_o, taken, NULL);
    Py_XDECREF(from);
    Py_XDECREF(tasks);
    if (r == NULL) return -1;
    Py_ssize_t v = PyLong_AsSsize_t(r);
    Py_DECREF(r);
    if (v == -1 && PyErr_Occurred()) return -1;
    *left = v;
    return 0;
}

/* ``tree.nb_tree += 1; left = tree._tree_sweep(start, job_id, left, mem, mem_bw, taken)``:
 * _RankedTree._tree_sweep, here: the tree brought up to date (refresh_tree, only when
 * ``tree.dirty`` holds processors), then the walk over its slots with
 * MaxTree.leftmost_from's descent, each processor it offers checked against the pool, its
 * run taken with take_run (no Python call per processor) and a processor found ineligible
 * added to ``tree.dirty``. A tree whose parts are not a set, a MaxTree's list of 2 * size
 * slots and an int size goes to the Python sweep, before anything changed. */
static int tree_sweep(PoolObject *self, PyObject *tree, PyObject *order, Py_ssize_t start,
                      PyObject *job_id, Py_ssize_t *left, PyObject *mem_o, PyObject *bw_o,
                      PyObject *need_o, PyObject *taken) {
    if (count_tree_sweep(tree) < 0) return -1;
    PyObject *dirty = PyObject_GetAttr(tree, s_dirty), *segment = NULL, *slots = NULL;
    PyObject *size_o = NULL;
    int ok = -1;
    if (dirty == NULL) return -1;
    if (!PySet_CheckExact(dirty)) {
        ok = python_sweep(tree, start, job_id, left, mem_o, bw_o, taken);
        goto done;
    }
    if ((segment = PyObject_GetAttr(tree, s_tree)) == NULL) goto done;
    if ((slots = PyObject_GetAttr(segment, s_tree)) == NULL) goto done;
    if ((size_o = PyObject_GetAttr(segment, s_size)) == NULL) goto done;
    Py_ssize_t size = PyLong_CheckExact(size_o) ? PyLong_AsSsize_t(size_o) : -1;
    if (size == -1 && PyErr_Occurred()) PyErr_Clear();
    if (!PyList_CheckExact(slots) || size < 1 || PyList_GET_SIZE(slots) != 2 * size) {
        ok = python_sweep(tree, start, job_id, left, mem_o, bw_o, taken);
        goto done;
    }
    /* self.refresh(): a no-op when nothing is dirty */
    if (PySet_GET_SIZE(dirty) && refresh_tree(self, tree, dirty, slots, size) < 0) goto done;
    double mem = PyFloat_AS_DOUBLE(mem_o), need = PyFloat_AS_DOUBLE(need_o);
    Py_ssize_t tasks = *left;
    Py_ssize_t r = leftmost_from(slots, size, start, need, need_o);
    while (r >= 0) {
        PyObject *proc_o = item(order, r);
        if (proc_o == NULL) goto done;
        Py_ssize_t proc = PyLong_AsSsize_t(proc_o), node;
        if (proc == -1 && PyErr_Occurred()) goto done;
        PyObject *members = item(self->proc_free, proc);
        if (members == NULL) goto done;
        if (!PyList_Check(members)) {
            PyErr_SetString(PyExc_TypeError, "proc_free must hold lists");
            goto done;
        }
        if (PyList_GET_SIZE(members)) {
            if (get_ssize(self->proc_node, proc, &node) < 0) goto done;
            PyObject *spare_o = item(self->node_free_mem, node);
            int fits = spare_o == NULL ? -1 : at_least(spare_o, need, need_o);
            if (fits < 0) goto done;
            if (fits) {
                double spare;
                if (get_double(self->node_free_mem, node, &spare) < 0) goto done;
                Py_ssize_t count = PyList_GET_SIZE(members);
                if (tasks < count) count = tasks;
                if (mem > 0.0 && count > 1) count = memory_run(count, spare, mem, need);
                Py_INCREF(proc_o);
                PyObject *cores = take_run_impl(self, proc, count, job_id, mem_o, bw_o);
                int rc = cores == NULL ? -1 : PyDict_SetItem(taken, proc_o, cores);
                Py_XDECREF(cores);
                Py_DECREF(proc_o);
                if (rc < 0) goto done;
                tasks -= count;
                if (!tasks) break;
                r = leftmost_from(slots, size, r + 1, need, need_o);
                continue;
            }
        }
        if (PySet_Add(dirty, proc_o) < 0) goto done;
        r = leftmost_from(slots, size, r + 1, need, need_o);
    }
    if (r == -2) goto done;
    *left = tasks;
    ok = 0;
done:
    Py_DECREF(dirty);
    Py_XDECREF(segment);
    Py_XDECREF(slots);
    Py_XDECREF(size_o);
    return ok;
}

/* Pool.ranked_allocate(tree, job_id, res, mem, mem_bw, taken, open_misses, sort_back):
 * _RankedTree.allocate for ``tree``, a _RankedTree of this pool: the walk of ``tree.open`` in
 * rank order, then the sweep through its tree (tree_sweep), taking the run of each eligible
 * processor with take_run (here, no Python call per processor). Returns how many tasks got a
 * core. The two constants are the resource manager's _OPEN_MISSES and _SORT_BACK, passed as
 * it reads them. Other argument types than the job records' go to the Python; free memory
 * that is not a float is compared as Python compares it (at_least). */
static PyObject *Pool_ranked_allocate(PoolObject *self, PyObject *const *args,
                                      Py_ssize_t nargs) {
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "ranked_allocate(tree, job_id, res, mem, mem_bw, "
                                         "taken, open_misses, sort_back)");
        return NULL;
    }
    Py_ssize_t open_misses = PyLong_AsSsize_t(args[6]), sort_back = PyLong_AsSsize_t(args[7]);
    if ((open_misses == -1 || sort_back == -1) && PyErr_Occurred()) return NULL;
    PyObject *tree = args[0], *job_id = args[1], *mem_o = args[3], *bw_o = args[4];
    PyObject *taken = args[5];
    Py_ssize_t res = PyLong_Check(args[2]) ? PyLong_AsSsize_t(args[2]) : -1;
    if (res == -1 && PyErr_Occurred()) PyErr_Clear();
    if (res < 0 || !PyFloat_CheckExact(mem_o) || !PyFloat_CheckExact(bw_o) ||
        !PyDict_Check(taken)) {
        PyObject *method = PyObject_GetAttr(tree, s_allocate);
        if (method == NULL) return NULL;
        PyObject *r = PyObject_Vectorcall(method, args + 1, 5, NULL);
        Py_DECREF(method);
        return r;
    }
    PyObject *ranks = PyObject_GetAttr(tree, s_open);
    PyObject *listed = ranks == NULL ? NULL : PyObject_GetAttr(tree, s_listed);
    PyObject *order = listed == NULL ? NULL : PyObject_GetAttr(tree, s_order);
    PyObject *result = NULL, *need_o = NULL;
    if (order == NULL) goto done;
    if (!PyList_Check(ranks) || !PyList_Check(listed) || !PyList_Check(order)) {
        PyErr_SetString(PyExc_TypeError, "tree.open, tree.listed and tree.order must be lists");
        goto done;
    }
    if (merge_gained(self, tree, ranks, listed, sort_back) < 0) goto done;
    double mem = PyFloat_AS_DOUBLE(mem_o);
    double need = mem - MEM_TOL;
    if ((need_o = PyFloat_FromDouble(need)) == NULL) goto done;
    Py_ssize_t left = res, misses = open_misses, i = 0;
    while (i < PyList_GET_SIZE(ranks)) {
        Py_ssize_t r = PyLong_AsSsize_t(PyList_GET_ITEM(ranks, i)), proc, node;
        if (r == -1 && PyErr_Occurred()) goto done;
        PyObject *proc_o = item(order, r);
        if (proc_o == NULL) goto done;
        proc = PyLong_AsSsize_t(proc_o);
        if (proc == -1 && PyErr_Occurred()) goto done;
        PyObject *members = item(self->proc_free, proc);
        if (members == NULL) goto done;
        if (!PyList_Check(members)) {
            PyErr_SetString(PyExc_TypeError, "proc_free must hold lists");
            goto done;
        }
        if (PyList_GET_SIZE(members) == 0) { /* full: out of the walk */
            if (PyList_SetSlice(ranks, i, i + 1, NULL) < 0) goto done;
            if (set_borrowed(listed, proc, Py_False) < 0) goto done;
            continue;
        }
        double spare;
        if (get_ssize(self->proc_node, proc, &node) < 0) goto done;
        PyObject *spare_o = item(self->node_free_mem, node);
        int fits = spare_o == NULL ? -1 : at_least(spare_o, need, need_o);
        if (fits < 0) goto done;
        if (fits) {
            if (get_double(self->node_free_mem, node, &spare) < 0) goto done;
            Py_ssize_t count = PyList_GET_SIZE(members);
            if (left < count) count = left;
            if (mem > 0.0 && count > 1) count = memory_run(count, spare, mem, need);
            Py_INCREF(proc_o);
            Py_INCREF(members);
            PyObject *cores = take_run_impl(self, proc, count, job_id, mem_o, bw_o);
            int rc = cores == NULL ? -1 : PyDict_SetItem(taken, proc_o, cores);
            Py_XDECREF(cores);
            Py_DECREF(proc_o);
            Py_ssize_t still = PyList_GET_SIZE(members); /* the same list, less the cores */
            Py_DECREF(members);
            if (rc < 0) goto done;
            left -= count;
            if (still) {
                i += 1;
            } else {
                if (PyList_SetSlice(ranks, i, i + 1, NULL) < 0) goto done;
                if (set_borrowed(listed, proc, Py_False) < 0) goto done;
            }
            if (!left) break;
            continue;
        }
        misses -= 1;
        if (!misses) {
            if (tree_sweep(self, tree, order, r + 1, job_id, &left, mem_o, bw_o, need_o,
                           taken) < 0)
                goto done;
            break;
        }
        i += 1;
    }
    result = PyLong_FromSsize_t(res - left);
done:
    Py_XDECREF(need_o);
    Py_XDECREF(ranks);
    Py_XDECREF(listed);
    Py_XDECREF(order);
    return result;
}

/* ---- the fit counts' recount ------------------------------------------------------- */

/* Python's float floor division, ``vx // wx`` (CPython's float_floor_div and _float_div_mod,
 * Objects/floatobject.c), step for step: the remainder by fmod (exact), the quotient from
 * what is left, one less when the remainder's sign is not the divisor's, snapped to the
 * nearest whole number (the division may miss it by a rounding), and a zero quotient given
 * the sign of the true one. ``wx`` is not zero (the caller checks). */
static inline double floor_div(double vx, double wx) {
    double mod = fmod(vx, wx);
    double div = (vx - mod) / wx;
    if (mod) {
        if ((wx < 0) != (mod < 0)) div -= 1.0; /* (the remainder would gain wx) */
    }
    if (div) {
        double floordiv = floor(div);
        if (div - floordiv > 0.5) floordiv += 1.0;
        return floordiv;
    }
    return copysign(0.0, vx / wx);
}

/* A list item as the double Python's float arithmetic converts it to: a float's own value,
 * an int's PyLong_AsDouble (what ``float - int`` and ``int + float`` do). 0: another type, or
 * an int too large (Python then raises: the caller lets the Python run). */
static inline int as_double(PyObject *o, double *out) {
    if (PyFloat_CheckExact(o)) {
        *out = PyFloat_AS_DOUBLE(o);
        return 1;
    }
    if (PyLong_CheckExact(o)) {
        double v = PyLong_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        *out = v;
        return 1;
    }
    return 0;
}

/* Room for ``n`` nodes in the recount's buffers. */
static int reserve_marks(PoolObject *self, Py_ssize_t n) {
    if (n <= self->nb_marks) return 0;
    unsigned int *marks = PyMem_Calloc((size_t)n, sizeof(unsigned int));
    Py_ssize_t *met = PyMem_Calloc((size_t)n, sizeof(Py_ssize_t));
    double *figures = PyMem_Calloc((size_t)n * 3, sizeof(double));
    Py_ssize_t *tallies = PyMem_Calloc((size_t)n, sizeof(Py_ssize_t));
    if (marks == NULL || met == NULL || figures == NULL || tallies == NULL) {
        PyMem_Free(marks);
        PyMem_Free(met);
        PyMem_Free(figures);
        PyMem_Free(tallies);
        PyErr_NoMemory();
        return -1;
    }
    PyMem_Free(self->marks);
    PyMem_Free(self->met);
    PyMem_Free(self->figures);
    PyMem_Free(self->tallies);
    self->marks = marks;
    self->met = met;
    self->figures = figures;
    self->tallies = tallies;
    self->nb_marks = n;
    self->mark = 0;
    return 0;
}

/* A new mark for one recount (all marks cleared when the counter wraps). */
static unsigned int next_mark(PoolObject *self) {
    if (++self->mark == 0) {
        memset(self->marks, 0, (size_t)self->nb_marks * sizeof(unsigned int));
        self->mark = 1;
    }
    return self->mark;
}

/* A node id of a change log as an index below ``n``; -1: not a plain int in range (the
 * caller declines: the Python raises or counts from the end). */
static inline Py_ssize_t node_index(PyObject *o, Py_ssize_t n) {
    if (!PyLong_CheckExact(o)) return -1;
    Py_ssize_t node = PyLong_AsSsize_t(o);
    if (node == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    return node < n ? node : -1;
}

/* Pool.floor_catch_up(counts, nodes, start, sizes, node_busy, node_free_mem, mem, total):
 * the loop of fit._FloorCounts.catch_up, on the lists it is given (the pool's, read by the
 * caller as the Python reads them: no list held here for it). Each node of
 * ``nodes[start:]`` once (in the order first met; Python's set order differs, which cannot
 * change the total: the counts are whole numbers far below 2**53, so every sum is exact):
 * ``free = sizes[node] - node_busy[node]``; with a free core, ``count = (node_free_mem[node]
 * + MEM_TOL) // mem``, capped at ``free``, raised to 0.0 when below; a full node counts 0.0.
 * A count that differs from ``counts[node]`` is written (a new float) and the total moves
 * by the difference, as the Python does. Returns the new total.
 *
 * A first pass reads every figure before anything changes: when one is not what the Python
 * arithmetic would see as the same double (a count that is not a float, a node id that is
 * not a plain int in range, a zero or non-float ``mem``...), it returns NotImplemented and
 * the caller runs the Python loop, which then behaves (or raises) as it always did. */
static PyObject *Pool_floor_catch_up(PoolObject *self, PyObject *const *args,
                                     Py_ssize_t nargs) {
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "floor_catch_up(counts, nodes, start, sizes, "
                                         "node_busy, node_free_mem, mem, total)");
        return NULL;
    }
    PyObject *counts = args[0], *nodes = args[1], *sizes = args[3];
    PyObject *node_busy = args[4], *node_free_mem = args[5];
    if (!PyList_CheckExact(counts) || !PyList_CheckExact(nodes) || !PyList_CheckExact(sizes) ||
        !PyList_CheckExact(node_busy) || !PyList_CheckExact(node_free_mem) ||
        !PyLong_CheckExact(args[2]) || !PyFloat_CheckExact(args[6]) ||
        !PyFloat_CheckExact(args[7]))
        Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t start = PyLong_AsSsize_t(args[2]);
    if (start == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    double mem = PyFloat_AS_DOUBLE(args[6]), total = PyFloat_AS_DOUBLE(args[7]);
    if (start < 0 || mem == 0.0) Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t n = PyList_GET_SIZE(counts);
    if (PyList_GET_SIZE(sizes) < n) n = PyList_GET_SIZE(sizes);
    if (PyList_GET_SIZE(node_busy) < n) n = PyList_GET_SIZE(node_busy);
    if (PyList_GET_SIZE(node_free_mem) < n) n = PyList_GET_SIZE(node_free_mem);
    if (reserve_marks(self, n) < 0) return NULL;
    unsigned int *marks = self->marks, mark = next_mark(self);
    Py_ssize_t *met = self->met, nb_met = 0;
    double *figures = self->figures;
    Py_ssize_t end = PyList_GET_SIZE(nodes);
    for (Py_ssize_t i = start; i < end; i++) {
        Py_ssize_t node = node_index(PyList_GET_ITEM(nodes, i), n);
        if (node < 0) Py_RETURN_NOTIMPLEMENTED;
        if (marks[node] == mark) continue;
        marks[node] = mark;
        double size, busy, free_mem = 0.0;
        PyObject *size_o = PyList_GET_ITEM(sizes, node), *old_o = PyList_GET_ITEM(counts, node);
        if (!PyFloat_CheckExact(size_o) || !PyFloat_CheckExact(old_o)) Py_RETURN_NOTIMPLEMENTED;
        size = PyFloat_AS_DOUBLE(size_o);
        if (!as_double(PyList_GET_ITEM(node_busy, node), &busy)) Py_RETURN_NOTIMPLEMENTED;
        double free = size - busy;
        if (free && !as_double(PyList_GET_ITEM(node_free_mem, node), &free_mem))
            Py_RETURN_NOTIMPLEMENTED;
        double *f = figures + 3 * nb_met;
        f[0] = free;
        f[1] = free_mem;
        f[2] = PyFloat_AS_DOUBLE(old_o);
        met[nb_met++] = node;
    }
    for (Py_ssize_t j = 0; j < nb_met; j++) {
        const double *f = figures + 3 * j;
        double free = f[0], old = f[2];
        if (free) {
            double count = floor_div(f[1] + MEM_TOL, mem);
            if (count > free)
                count = free;
            else if (count < 0.0)
                count = 0.0;
            if (count != old) {
                total += count - old;
                if (set_double(counts, met[j], count) < 0) return NULL;
            }
        } else if (old) {
            total -= old;
            if (set_borrowed(counts, met[j], self->zero) < 0) return NULL;
        }
    }
    return PyFloat_FromDouble(total);
}

/* The largest magnitude of a count, a busy count or a quotient taken here (far beyond any
 * platform): the differences and free core counts then never overflow. Beyond it, the
 * Python runs. */
#define FIT_BOUND ((Py_ssize_t)1 << 40)

/* Pool.size_catch_up(counts, nodes, start, node_cores, node_busy, node_free_mem, need, mem,
 * total): the loop of fit._SizeTracker.catch_up (the resource manager's fit index), on the
 * lists it is given. Each node of ``nodes[start:]`` once (the order does not matter: the
 * counts and total are ints): ``free = len(node_cores[node]) - node_busy[node]``; none free:
 * 0; else ``spare = node_free_mem[node] - need``; below 0.0: 0; ``mem <= 0.0``: ``free``;
 * else ``int(spare / mem + _SLACK) + 1`` capped at ``free`` (``int`` of a float truncates
 * toward zero, as the C conversion does). Every new count and the new total are worked out
 * before any change; the counts that differ are then written. Returns the new total.
 *
 * NotImplemented (nothing changed) where the Python would not compute the same in C
 * integers and doubles: a count or busy count that is not a plain int or is beyond
 * FIT_BOUND, a quotient that is NaN or beyond it (``int()`` raises for NaN and infinities),
 * a node id not in range, ``need`` or ``mem`` not a float. */
static PyObject *Pool_size_catch_up(PoolObject *self, PyObject *const *args,
                                    Py_ssize_t nargs) {
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "size_catch_up(counts, nodes, start, node_cores, "
                                         "node_busy, node_free_mem, need, mem, total)");
        return NULL;
    }
    PyObject *counts = args[0], *nodes = args[1], *node_cores = args[3];
    PyObject *node_busy = args[4], *node_free_mem = args[5];
    if (!PyList_CheckExact(counts) || !PyList_CheckExact(nodes) ||
        !PyList_CheckExact(node_cores) || !PyList_CheckExact(node_busy) ||
        !PyList_CheckExact(node_free_mem) || !PyLong_CheckExact(args[2]) ||
        !PyFloat_CheckExact(args[6]) || !PyFloat_CheckExact(args[7]) ||
        !PyLong_CheckExact(args[8]))
        Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t start = PyLong_AsSsize_t(args[2]), total = PyLong_AsSsize_t(args[8]);
    if ((start == -1 || total == -1) && PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    double need = PyFloat_AS_DOUBLE(args[6]), mem = PyFloat_AS_DOUBLE(args[7]);
    if (start < 0) Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t n = PyList_GET_SIZE(counts);
    if (PyList_GET_SIZE(node_cores) < n) n = PyList_GET_SIZE(node_cores);
    if (PyList_GET_SIZE(node_busy) < n) n = PyList_GET_SIZE(node_busy);
    if (PyList_GET_SIZE(node_free_mem) < n) n = PyList_GET_SIZE(node_free_mem);
    if (reserve_marks(self, n) < 0) return NULL;
    unsigned int *marks = self->marks, mark = next_mark(self);
    Py_ssize_t *met = self->met, *tallies = self->tallies, nb_met = 0;
    Py_ssize_t end = PyList_GET_SIZE(nodes);
    for (Py_ssize_t i = start; i < end; i++) {
        Py_ssize_t node = node_index(PyList_GET_ITEM(nodes, i), n);
        if (node < 0) Py_RETURN_NOTIMPLEMENTED;
        if (marks[node] == mark) continue;
        marks[node] = mark;
        PyObject *cores = PyList_GET_ITEM(node_cores, node);
        PyObject *busy_o = PyList_GET_ITEM(node_busy, node);
        PyObject *old_o = PyList_GET_ITEM(counts, node);
        if (!PyList_CheckExact(cores) || !PyLong_CheckExact(busy_o) || !PyLong_CheckExact(old_o))
            Py_RETURN_NOTIMPLEMENTED;
        Py_ssize_t busy = PyLong_AsSsize_t(busy_o), old = PyLong_AsSsize_t(old_o);
        if ((busy == -1 || old == -1) && PyErr_Occurred()) {
            PyErr_Clear();
            Py_RETURN_NOTIMPLEMENTED;
        }
        if (busy > FIT_BOUND || busy < -FIT_BOUND || old > FIT_BOUND || old < -FIT_BOUND)
            Py_RETURN_NOTIMPLEMENTED;
        Py_ssize_t free = PyList_GET_SIZE(cores) - busy, count;
        if (!free) {
            count = 0;
        } else {
            double free_mem;
            if (!as_double(PyList_GET_ITEM(node_free_mem, node), &free_mem))
                Py_RETURN_NOTIMPLEMENTED;
            double spare = free_mem - need;
            if (spare < 0.0) {
                count = 0;
            } else if (mem <= 0.0) {
                count = free;
            } else {
                double quotient = spare / mem + FIT_SLACK;
                if (!(quotient < (double)FIT_BOUND && quotient > -(double)FIT_BOUND))
                    Py_RETURN_NOTIMPLEMENTED;
                count = (Py_ssize_t)quotient + 1;
                if (count > free) count = free;
            }
        }
        /* |count| and |old| are within FIT_BOUND plus a node's core count: no overflow. */
        Py_ssize_t delta = count - old;
        if ((delta > 0 && total > PY_SSIZE_T_MAX - delta) ||
            (delta < 0 && total < PY_SSIZE_T_MIN - delta))
            Py_RETURN_NOTIMPLEMENTED;
        total += delta;
        if (delta) { /* the counts that change, written below */
            met[nb_met] = node;
            tallies[nb_met++] = count;
        }
    }
    for (Py_ssize_t j = 0; j < nb_met; j++) {
        if (set_ssize(counts, met[j], tallies[j]) < 0) return NULL;
    }
    return PyLong_FromSsize_t(total);
}

/* ---- the type ------------------------------------------------------------------------ */

/* Where each reference is found on the CorePool (attribute name, field, kind). */
enum kind { LIST, LIST_OR_NONE, DICT, SET, ANY };
static const struct {
    const char *name;
    size_t offset;
    enum kind kind;
} FIELDS[] = {
    {"core_proc", offsetof(PoolObject, core_proc), LIST},
    {"proc_node", offsetof(PoolObject, proc_node), LIST},
    {"proc_cores", offsetof(PoolObject, proc_cores), LIST},
    {"node_procs", offsetof(PoolObject, node_procs), LIST},
    {"node_capacity", offsetof(PoolObject, node_capacity), LIST},
    {"_bw_limit", offsetof(PoolObject, bw_limit), LIST},
    {"proc_mem_bw", offsetof(PoolObject, proc_mem_bw), LIST},
    {"core_job", offsetof(PoolObject, core_job), LIST},
    {"core_mem", offsetof(PoolObject, core_mem), LIST},
    {"core_bw", offsetof(PoolObject, core_bw), LIST},
    {"pstate", offsetof(PoolObject, pstate), LIST},
    {"emitted", offsetof(PoolObject, emitted), LIST},
    {"proc_free", offsetof(PoolObject, proc_free), LIST},
    {"proc_busy", offsetof(PoolObject, proc_busy), LIST},
    {"proc_demand", offsetof(PoolObject, proc_demand), LIST},
    {"node_free_mem", offsetof(PoolObject, node_free_mem), LIST},
    {"node_busy", offsetof(PoolObject, node_busy), LIST},
    {"_free_cores", offsetof(PoolObject, free_cores), LIST_OR_NONE},
    {"_free_index", offsetof(PoolObject, free_index), LIST_OR_NONE},
    {"_over", offsetof(PoolObject, over), LIST},
    {"_run_state", offsetof(PoolObject, run_state), LIST},
    {"_idle_state", offsetof(PoolObject, idle_state), LIST},
    {"_open_episode", offsetof(PoolObject, open_episode), DICT},
    {"episodes", offsetof(PoolObject, episodes), ANY},
    {"_changed", offsetof(PoolObject, changed), SET},
    {"gain_listeners", offsetof(PoolObject, gain_listeners), LIST},
    {"node_gain_listeners", offsetof(PoolObject, node_gain_listeners), LIST},
    {"demand_listeners", offsetof(PoolObject, demand_listeners), LIST},
    {"node_change_listeners", offsetof(PoolObject, node_change_listeners), LIST},
    {"over_starts", offsetof(PoolObject, over_starts), ANY},
    {"over_ends", offsetof(PoolObject, over_ends), ANY},
};
#define NB_FIELDS (sizeof(FIELDS) / sizeof(FIELDS[0]))

#define FIELD(self, i) (*(PyObject **)((char *)(self) + FIELDS[i].offset))

static int Pool_traverse(PoolObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->pool);
    for (size_t i = 0; i < NB_FIELDS; i++) Py_VISIT(FIELD(self, i));
    Py_VISIT(self->logger);
    Py_VISIT(self->open_end);
    Py_VISIT(self->set_resource_state);
    Py_VISIT(self->host_ids);
    Py_VISIT(self->reference);
    return 0;
}

static int Pool_clear(PoolObject *self) {
    Py_CLEAR(self->pool);
    for (size_t i = 0; i < NB_FIELDS; i++) Py_CLEAR(FIELD(self, i));
    Py_CLEAR(self->logger);
    Py_CLEAR(self->open_end);
    Py_CLEAR(self->set_resource_state);
    Py_CLEAR(self->host_ids);
    Py_CLEAR(self->reference);
    Py_CLEAR(self->zero);
    return 0;
}

static void Pool_dealloc(PoolObject *self) {
    PyObject_GC_UnTrack(self);
    Pool_clear(self);
    PyMem_Free(self->marks);
    PyMem_Free(self->met);
    PyMem_Free(self->figures);
    PyMem_Free(self->tallies);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* (Re)read the pool's lists, dicts and sets: at creation and whenever the Python replaces
 * one of them (CorePool.reset, _keep_free_order), so that the bound methods, which callers
 * may hold (``take = pool.take``, wrappers), stay valid for the pool's lifetime. */
static int load_fields(PoolObject *self) {
    PyObject *flag = PyObject_GetAttrString(self->pool, "_free_order");
    if (flag == NULL) return -1;
    int free_order = PyObject_IsTrue(flag);
    Py_DECREF(flag);
    if (free_order < 0) return -1;
    for (size_t i = 0; i < NB_FIELDS; i++) {
        PyObject *o = PyObject_GetAttrString(self->pool, FIELDS[i].name);
        if (o == NULL) return -1;
        int ok;
        switch (FIELDS[i].kind) {
            case LIST: ok = PyList_Check(o); break;
            case LIST_OR_NONE: ok = (o == Py_None && !free_order) || PyList_Check(o); break;
            case DICT: ok = PyDict_Check(o); break;
            case SET: ok = PySet_Check(o); break;
            default: ok = 1;
        }
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "CorePool.%s has an unexpected type %R",
                         FIELDS[i].name, (PyObject *)Py_TYPE(o));
            Py_DECREF(o);
            return -1;
        }
        Py_XSETREF(FIELD(self, i), o);
    }
    self->free_order = free_order;
    return 0;
}

/* Pool(pool, logger, open_end, set_resource_state, host_ids, reference): the references
 * of ``pool`` (a CorePool) as they are now. */
static int Pool_init(PoolObject *self, PyObject *args, PyObject *kwds) {
    PyObject *pool, *logger, *open_end, *srs, *host_ids, *ref;
    static char *kwlist[] = {"pool", "logger", "open_end", "set_resource_state", "host_ids",
                             "reference", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOO:Pool", kwlist, &pool, &logger,
                                     &open_end, &srs, &host_ids, &ref))
        return -1;
    Pool_clear(self);
    Py_INCREF(pool);
    self->pool = pool;
    Py_INCREF(logger);
    self->logger = logger;
    Py_INCREF(open_end);
    self->open_end = open_end;
    Py_INCREF(srs);
    self->set_resource_state = srs;
    Py_INCREF(host_ids);
    self->host_ids = host_ids;
    Py_INCREF(ref);
    self->reference = ref;
    if ((self->zero = PyFloat_FromDouble(0.0)) == NULL) return -1;
    return load_fields(self);
}

/* Pool.refresh(): read the pool's lists again (CorePool._bind_native). */
static PyObject *Pool_refresh(PoolObject *self, PyObject *Py_UNUSED(ignored)) {
    if (self->pool == NULL) {
        PyErr_SetString(PyExc_ValueError, "Pool not initialised");
        return NULL;
    }
    if (load_fields(self) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef Pool_methods[] = {
    {"take_run", (PyCFunction)(void (*)(void))Pool_take_run, METH_FASTCALL,
     "take_run(proc, count, job_id, mem, mem_bw): CorePool.take_run."},
    {"take", (PyCFunction)(void (*)(void))Pool_take, METH_FASTCALL,
     "take(core, job_id, mem, mem_bw): CorePool.take."},
    {"settle", (PyCFunction)(void (*)(void))Pool_settle, METH_FASTCALL,
     "settle(cores, now): CorePool.settle."},
    {"release", (PyCFunction)(void (*)(void))Pool_release, METH_FASTCALL,
     "release(cores, now): CorePool.release."},
    {"settle_taken", (PyCFunction)(void (*)(void))Pool_settle_taken, METH_FASTCALL,
     "settle_taken(taken, now): CorePool.settle_taken."},
    {"drain", (PyCFunction)Pool_drain, METH_NOARGS, "drain(): CorePool.drain."},
    {"refresh", (PyCFunction)Pool_refresh, METH_NOARGS,
     "refresh(): read the pool's lists again (after the Python replaced one)."},
    {"floor_catch_up", (PyCFunction)(void (*)(void))Pool_floor_catch_up, METH_FASTCALL,
     "floor_catch_up(counts, nodes, start, sizes, node_busy, node_free_mem, mem, total): "
     "the loop of fit._FloorCounts.catch_up; the new total, or NotImplemented."},
    {"size_catch_up", (PyCFunction)(void (*)(void))Pool_size_catch_up, METH_FASTCALL,
     "size_catch_up(counts, nodes, start, node_cores, node_busy, node_free_mem, need, mem, "
     "total): the loop of fit._SizeTracker.catch_up; the new total, or NotImplemented."},
    {"ranked_allocate", (PyCFunction)(void (*)(void))Pool_ranked_allocate, METH_FASTCALL,
     "ranked_allocate(tree, job_id, res, mem, mem_bw, taken, open_misses, sort_back): "
     "_RankedTree.allocate."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PoolType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hdeeprm.decision._pool_kernels.Pool",
    .tp_basicsize = sizeof(PoolObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The compiled takes, releases, settles and drains of one CorePool.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Pool_init,
    .tp_dealloc = (destructor)Pool_dealloc,
    .tp_traverse = (traverseproc)Pool_traverse,
    .tp_clear = (inquiry)Pool_clear,
    .tp_methods = Pool_methods,
};

static PyMethodDef methods[] = {
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_pool_kernels", NULL, -1, methods,
};

static int intern_names(void) {
    struct {
        PyObject **slot;
        const char *text;
    } names[] = {
        {&s_free_count, "free_count"},   {&s_update, "update"},
        {&s_nodes, "nodes"},             {&s_append, "append"},
        {&s_gained, "_gained"},          {&s_is_enabled_for, "isEnabledFor"},
        {&s_procs, "procs"},             {&s_starts, "starts"},
        {&s_ends, "ends"},               {&s_take_run, "take_run"},
        {&s_release, "release"},         {&s_settle_taken, "settle_taken"},
        {&s_open, "open"},
        {&s_listed, "listed"},           {&s_gained_set, "gained"},
        {&s_order, "order"},             {&s_rank, "rank"},
        {&s_nb_tree, "nb_tree"},         {&s_tree_sweep, "_tree_sweep"},
        {&s_allocate, "allocate"},       {&s_take, "take"},
        {&s_dirty, "dirty"},             {&s_tree, "tree"},
        {&s_size, "size"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (*names[i].slot == NULL &&
            (*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL)
            return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__pool_kernels(void) {
    if (intern_names() < 0) return NULL;
    if (PyType_Ready(&PoolType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&PoolType);
    if (PyModule_AddObject(m, "Pool", (PyObject *)&PoolType) < 0) {
        Py_DECREF(&PoolType);
        Py_DECREF(m);
        return NULL;
    }
    PyObject *tolerance = PyFloat_FromDouble(MEM_TOL), *slack = PyFloat_FromDouble(FIT_SLACK);
    if (tolerance == NULL || slack == NULL ||
        PyModule_AddStringConstant(m, "SOURCE_DIGEST", SOURCE_DIGEST) < 0 ||
        PyModule_AddObjectRef(m, "MEM_TOL", tolerance) < 0 ||
        PyModule_AddObjectRef(m, "FIT_SLACK", slack) < 0) {
        Py_XDECREF(tolerance);
        Py_XDECREF(slack);
        Py_DECREF(m);
        return NULL;
    }
    Py_DECREF(tolerance);
    Py_DECREF(slack);
    return m;
}
