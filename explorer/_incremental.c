/* explorer._incremental: the mask of a state's slices that are not its parent's objects
 * (explorer/search/incremental.py, Slicer.changed; its pure-Python twin is Slicer.changed_py).
 *
 * changed_mask(s, t, code) -> int
 *   s, t: tuples of the same length (NamedTuple states); code: bytes, per field of the state
 *   (kind, bit, n, sub-bit x n): kind 0 a field read whole (its bit), 1 a record (one bit per
 *   field of it), 2 a tuple of records (one bit per field of the record class, over every
 *   element). Bits below 63; bit 63 is always set in the result.
 *
 * Masker(code): changed_mask with code bound, called as masker(s, t) (vectorcall: no Python
 *   frame), remembering its last (s, t) and answer: the serial search asks the mask of a step
 *   for its transition checks and again, for the same (s, t), for a new state's state checks.
 *   It holds s and t, so an address cannot be reused by another state while remembered.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

static uint64_t
all_bits(const unsigned char *sub, Py_ssize_t n)
{
    uint64_t m = 0;
    for (Py_ssize_t k = 0; k < n; k++)
        m |= (uint64_t)1 << sub[k];
    return m;
}

static uint64_t
record_bits(PyObject *x, PyObject *y, const unsigned char *sub, Py_ssize_t n)
{
    /* the fields of two records of one class that differ, or all of them */
    if (Py_TYPE(x) != Py_TYPE(y) || !PyTuple_Check(x) || PyTuple_GET_SIZE(x) != n || PyTuple_GET_SIZE(y) != n)
        return all_bits(sub, n);
    uint64_t m = 0;
    for (Py_ssize_t k = 0; k < n; k++)
        if (PyTuple_GET_ITEM(x, k) != PyTuple_GET_ITEM(y, k))
            m |= (uint64_t)1 << sub[k];
    return m;
}

static int
compute_mask(PyObject *s, PyObject *t, const unsigned char *c, Py_ssize_t clen, uint64_t *out)
{
    Py_ssize_t nf = PyTuple_GET_SIZE(s);
    uint64_t m = (uint64_t)1 << 63;
    int whole = Py_TYPE(s) != Py_TYPE(t) || PyTuple_GET_SIZE(t) != nf;
    Py_ssize_t pos = 0;
    for (Py_ssize_t i = 0; pos + 3 <= clen; i++) {
        unsigned char kind = c[pos], bit = c[pos + 1];
        Py_ssize_t n = c[pos + 2];
        const unsigned char *sub = c + pos + 3;
        pos += 3 + n;
        if (pos > clen) {
            PyErr_SetString(PyExc_ValueError, "changed_mask: code is cut short");
            return -1;
        }
        if (whole || i >= nf) {
            m |= kind == 0 ? (uint64_t)1 << bit : all_bits(sub, n);
            continue;
        }
        PyObject *x = PyTuple_GET_ITEM(s, i), *y = PyTuple_GET_ITEM(t, i);
        if (x == y)
            continue;
        if (kind == 0) {
            m |= (uint64_t)1 << bit;
        }
        else if (kind == 1) {
            m |= record_bits(x, y, sub, n);
        }
        else {
            if (!PyTuple_Check(x) || !PyTuple_Check(y) || PyTuple_GET_SIZE(x) != PyTuple_GET_SIZE(y)) {
                m |= all_bits(sub, n);
                continue;
            }
            Py_ssize_t rows = PyTuple_GET_SIZE(x);
            for (Py_ssize_t r = 0; r < rows; r++) {
                PyObject *u = PyTuple_GET_ITEM(x, r), *v = PyTuple_GET_ITEM(y, r);
                if (u != v)
                    m |= record_bits(u, v, sub, n);
            }
        }
    }
    *out = m;
    return 0;
}

static PyObject *
changed_mask(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "changed_mask(s, t, code) takes 3 arguments");
        return NULL;
    }
    PyObject *s = args[0], *t = args[1], *code = args[2];
    if (!PyTuple_Check(s) || !PyTuple_Check(t) || !PyBytes_Check(code)) {
        PyErr_SetString(PyExc_TypeError, "changed_mask: s and t must be tuples, code bytes");
        return NULL;
    }
    uint64_t m;
    if (compute_mask(s, t, (const unsigned char *)PyBytes_AS_STRING(code), PyBytes_GET_SIZE(code), &m) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(m);
}

typedef struct {
    PyObject_HEAD
    PyObject *code;   /* bytes */
    PyObject *last_s; /* the last (s, t) asked, held; NULL before the first */
    PyObject *last_t;
    PyObject *last_m; /* its mask, an int */
    vectorcallfunc vectorcall;
} Masker;

static PyObject *
masker_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Masker *self = (Masker *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 2 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_SetString(PyExc_TypeError, "Masker(s, t) takes 2 positional arguments");
        return NULL;
    }
    PyObject *s = args[0], *t = args[1];
    if (s == self->last_s && t == self->last_t) {
        Py_INCREF(self->last_m);
        return self->last_m;
    }
    if (!PyTuple_Check(s) || !PyTuple_Check(t)) {
        PyErr_SetString(PyExc_TypeError, "Masker: s and t must be tuples");
        return NULL;
    }
    uint64_t m;
    if (compute_mask(s, t, (const unsigned char *)PyBytes_AS_STRING(self->code), PyBytes_GET_SIZE(self->code), &m) < 0)
        return NULL;
    PyObject *got = PyLong_FromUnsignedLongLong(m);
    if (got == NULL)
        return NULL;
    Py_INCREF(s);
    Py_INCREF(t);
    Py_INCREF(got);
    Py_XSETREF(self->last_s, s);
    Py_XSETREF(self->last_t, t);
    Py_XSETREF(self->last_m, got);
    return got;
}

static PyObject *
masker_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *code;
    if (!PyArg_ParseTuple(args, "O!:Masker", &PyBytes_Type, &code))
        return NULL;
    Masker *self = (Masker *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    Py_INCREF(code);
    self->code = code;
    self->last_s = self->last_t = self->last_m = NULL;
    self->vectorcall = masker_vectorcall;
    return (PyObject *)self;
}

static void
masker_dealloc(Masker *self)
{
    Py_XDECREF(self->code);
    Py_XDECREF(self->last_s);
    Py_XDECREF(self->last_t);
    Py_XDECREF(self->last_m);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject MaskerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "explorer._incremental.Masker",
    .tp_basicsize = sizeof(Masker),
    .tp_dealloc = (destructor)masker_dealloc,
    .tp_vectorcall_offset = offsetof(Masker, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Masker(code): masker(s, t) is changed_mask(s, t, code), its last answer remembered",
    .tp_new = masker_new,
};

static PyMethodDef methods[] = {
    {"changed_mask", (PyCFunction)(void (*)(void))changed_mask, METH_FASTCALL,
     "changed_mask(s, t, code): the mask of the slices of t that are not s's objects"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "explorer._incremental",
    "The slice masks of incremental property checking (explorer/search/incremental.py).", -1, methods,
};

PyMODINIT_FUNC
PyInit__incremental(void)
{
    if (PyType_Ready(&MaskerType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&MaskerType);
    if (PyModule_AddObject(m, "Masker", (PyObject *)&MaskerType) < 0) {
        Py_DECREF(&MaskerType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
