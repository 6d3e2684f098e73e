/*
 * explorer._speedups: optional C accelerators for the model checker's hot path.
 *
 * Use it through explorer/speedups.py, which falls back to pure Python when this
 * module is not built (or KAFKA_MC_PURE_PYTHON=1) and configures the Python
 * fallbacks used here for rare cases. Every function returns exactly what its
 * pure-Python counterpart returns:
 *
 *   FastReplace(cls, original)  a method descriptor, installed as cls._replace: a
 *                               NamedTuple's _replace (keyword arguments naming fields)
 *   set_item(t, i, v)           (*t[:i], v, *t[i + 1:])
 *   encode(value)               explorer.encoding.encode(value)
 *   fingerprint(value)          explorer.encoding.fingerprint(value)
 *   fingerprint_bytes(data)     explorer.encoding.fingerprint_bytes(data)
 *   FpTable(capacity, data, count)  a set of 64-bit fingerprints (explorer.search.visited)
 *   pack_states(states)         (payload, atoms, classes): a list of states packed
 *                               without pickle (explorer/search/statepack.py)
 *   unpack_states(payload, atoms, classes)
 *                               the list of states back, types and sharing kept
 *   memo_hash(cls)              give the record class cls a hash remembered per object
 *                               (the same value as tuple's; see "record memo" below)
 *   fast_new(cls, original, prefix, names, required, defaults, single)
 *                               calls of the record class cls build its instance in C
 *                               (see "record constructors" below)
 *   _configure(encode_other, set_item_slow)
 *                               the Python callables for values this module does not
 *                               encode itself (enums, dataclasses, errors) and for
 *                               set_item arguments outside its fast path
 *
 * Hand-written against the CPython C API (3.11+); no internal headers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------ fallbacks */

static PyObject *encode_other = NULL;  /* callable(value) -> bytes (explorer.encoding.encode) */
static PyObject *set_item_slow = NULL; /* callable(t, i, v) -> tuple (the slicing version) */

static PyObject *
configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "_configure() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    if (!PyCallable_Check(args[0]) || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_configure() arguments must be callable");
        return NULL;
    }
    Py_INCREF(args[0]);
    Py_XSETREF(encode_other, args[0]);
    Py_INCREF(args[1]);
    Py_XSETREF(set_item_slow, args[1]);
    Py_RETURN_NONE;
}

static int
check_configured(PyObject *fn)
{
    if (fn == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "explorer._speedups is not configured: use it through explorer.speedups");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ FastReplace */

typedef struct {
    PyObject_HEAD
    PyTypeObject *cls;   /* the NamedTuple class it is installed on */
    PyObject *fields;    /* tuple of interned str: cls._fields */
    PyObject *wrapped;   /* the original _replace */
    Py_ssize_t nfields;
    vectorcallfunc vectorcall;
} FastReplaceObject;

static PyTypeObject FastReplace_Type;

/* Index of field `name` in fr->fields, -1 if none, -2 on error. */
static Py_ssize_t
field_index(FastReplaceObject *fr, PyObject *name)
{
    PyObject **f = &PyTuple_GET_ITEM(fr->fields, 0);
    Py_ssize_t n = fr->nfields, j;
    for (j = 0; j < n; j++) {
        if (f[j] == name) {
            return j; /* keyword names from code objects are interned: the usual case */
        }
    }
    for (j = 0; j < n; j++) {
        int eq = PyObject_RichCompareBool(f[j], name, Py_EQ);
        if (eq < 0) {
            return -2;
        }
        if (eq) {
            return j;
        }
    }
    return -1;
}

static PyObject *
fastreplace_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastReplaceObject *fr = (FastReplaceObject *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 1) {
        if (nargs == 0) {
            PyErr_SetString(PyExc_TypeError, "_replace() missing 1 required positional argument: 'self'");
        }
        else {
            PyErr_Format(PyExc_TypeError, "_replace() takes 1 positional argument but %zd were given", nargs);
        }
        return NULL;
    }
    PyObject *self = args[0];
    if (!PyObject_TypeCheck(self, fr->cls)) {
        PyErr_Format(PyExc_TypeError, "descriptor '_replace' requires a '%s' object but received a '%s'",
                     fr->cls->tp_name, Py_TYPE(self)->tp_name);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(self);
    if (n != fr->nfields) {
        PyErr_Format(PyExc_TypeError, "Expected %zd arguments, got %zd", fr->nfields, n);
        return NULL;
    }
    /* tuple.__new__(type(self), items): the subclass's own allocator, like tuple_subtype_new;
       PyType_GenericAlloc zero-fills, takes a reference to a heap type and GC-tracks. */
    PyTypeObject *tp = Py_TYPE(self);
    PyObject *result = tp->tp_alloc(tp, n);
    if (result == NULL) {
        return NULL;
    }
    PyObject **src = &PyTuple_GET_ITEM(self, 0);
    PyObject **dst = &PyTuple_GET_ITEM(result, 0);
    for (Py_ssize_t j = 0; j < n; j++) {
        Py_INCREF(src[j]);
        dst[j] = src[j];
    }
    if (kwnames == NULL) {
        return result;
    }
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    PyObject *unexpected = NULL;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        Py_ssize_t j = field_index(fr, name);
        if (j >= 0) {
            PyObject *v = args[nargs + k];
            Py_INCREF(v);
            Py_SETREF(dst[j], v);
            continue;
        }
        if (j == -2) {
            goto error;
        }
        if (unexpected == NULL && (unexpected = PyList_New(0)) == NULL) {
            goto error;
        }
        if (PyList_Append(unexpected, name) < 0) {
            goto error;
        }
    }
    if (unexpected != NULL) {
        PyErr_Format(PyExc_ValueError, "Got unexpected field names: %R", unexpected);
        goto error;
    }
    return result;
error:
    Py_XDECREF(unexpected);
    Py_DECREF(result);
    return NULL;
}

static PyObject *
fastreplace_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *cls, *wrapped;
    static char *kwlist[] = {"cls", "original", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO:FastReplace", kwlist, &cls, &wrapped)) {
        return NULL;
    }
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type)
        || (PyTypeObject *)cls == &PyTuple_Type) {
        PyErr_SetString(PyExc_TypeError, "FastReplace() needs a tuple subclass (a NamedTuple class)");
        return NULL;
    }
    PyObject *names = PyObject_GetAttrString(cls, "_fields");
    if (names == NULL) {
        return NULL;
    }
    PyObject *given = PySequence_Tuple(names);
    Py_DECREF(names);
    if (given == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(given);
    PyObject *fields = PyTuple_New(n); /* a copy: cls._fields itself is never modified */
    if (fields == NULL) {
        Py_DECREF(given);
        return NULL;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *name = PyTuple_GET_ITEM(given, j);
        if (!PyUnicode_CheckExact(name)) {
            PyErr_SetString(PyExc_TypeError, "_fields must be a tuple of str");
            Py_DECREF(given);
            Py_DECREF(fields);
            return NULL;
        }
        Py_INCREF(name);
        PyUnicode_InternInPlace(&name); /* the canonical interned copy, as in kwnames */
        PyTuple_SET_ITEM(fields, j, name);
    }
    Py_DECREF(given);
    FastReplaceObject *fr = (FastReplaceObject *)type->tp_alloc(type, 0);
    if (fr == NULL) {
        Py_DECREF(fields);
        return NULL;
    }
    Py_INCREF(cls);
    fr->cls = (PyTypeObject *)cls;
    fr->fields = fields;
    Py_INCREF(wrapped);
    fr->wrapped = wrapped;
    fr->nfields = n;
    fr->vectorcall = fastreplace_vectorcall;
    return (PyObject *)fr;
}

static int
fastreplace_traverse(FastReplaceObject *fr, visitproc visit, void *arg)
{
    Py_VISIT(fr->cls);
    Py_VISIT(fr->fields);
    Py_VISIT(fr->wrapped);
    return 0;
}

static int
fastreplace_clear(FastReplaceObject *fr)
{
    Py_CLEAR(fr->cls);
    Py_CLEAR(fr->fields);
    Py_CLEAR(fr->wrapped);
    return 0;
}

static void
fastreplace_dealloc(FastReplaceObject *fr)
{
    PyObject_GC_UnTrack(fr);
    fastreplace_clear(fr);
    Py_TYPE(fr)->tp_free((PyObject *)fr);
}

static PyObject *
fastreplace_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self; /* Cls._replace: the descriptor itself, called with the instance first */
    }
    return PyMethod_New(self, obj);
}

static PyObject *
fastreplace_repr(FastReplaceObject *fr)
{
    return PyUnicode_FromFormat("<fast _replace of %s>", fr->cls ? fr->cls->tp_name : "?");
}

static PyObject *
fastreplace_get_name(FastReplaceObject *fr, void *closure)
{
    return PyUnicode_FromString("_replace");
}

static PyObject *
fastreplace_get_qualname(FastReplaceObject *fr, void *closure)
{
    PyObject *q = PyObject_GetAttrString((PyObject *)fr->cls, "__qualname__");
    if (q == NULL) {
        return NULL;
    }
    PyObject *r = PyUnicode_FromFormat("%U._replace", q);
    Py_DECREF(q);
    return r;
}

static PyGetSetDef fastreplace_getset[] = {
    {"__name__", (getter)fastreplace_get_name, NULL, NULL, NULL},
    {"__qualname__", (getter)fastreplace_get_qualname, NULL, NULL, NULL},
    {NULL},
};

static PyMemberDef fastreplace_members[] = {
    {"__objclass__", T_OBJECT, offsetof(FastReplaceObject, cls), READONLY, "the class it is installed on"},
    {"__wrapped__", T_OBJECT, offsetof(FastReplaceObject, wrapped), READONLY, "the original _replace"},
    {"_fields", T_OBJECT, offsetof(FastReplaceObject, fields), READONLY, "the field names, interned"},
    {NULL},
};

static PyTypeObject FastReplace_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "explorer._speedups.FastReplace",
    .tp_doc = "FastReplace(cls, original): a fast _replace for the NamedTuple class cls.",
    .tp_basicsize = sizeof(FastReplaceObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL
                | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = fastreplace_new,
    .tp_dealloc = (destructor)fastreplace_dealloc,
    .tp_traverse = (traverseproc)fastreplace_traverse,
    .tp_clear = (inquiry)fastreplace_clear,
    .tp_vectorcall_offset = offsetof(FastReplaceObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = fastreplace_descr_get,
    .tp_repr = (reprfunc)fastreplace_repr,
    .tp_getset = fastreplace_getset,
    .tp_members = fastreplace_members,
};

/* ------------------------------------------------------------------ set_item */

static PyObject *
set_item(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "set_item() takes 3 positional arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *t = args[0], *i = args[1], *v = args[2];
    /* Fast path: t[:i] and t[i + 1:] are tuple's own slices (t a tuple, or a subclass that
       does not override __getitem__) and 0 <= i < len(t). The result is a plain tuple. */
    if (PyTuple_Check(t) && PyLong_Check(i)
        && (PyTuple_CheckExact(t)
            || (Py_TYPE(t)->tp_as_mapping != NULL
                && Py_TYPE(t)->tp_as_mapping->mp_subscript == PyTuple_Type.tp_as_mapping->mp_subscript))) {
        int overflow;
        long k = PyLong_AsLongAndOverflow(i, &overflow);
        if (k == -1 && PyErr_Occurred()) {
            return NULL;
        }
        Py_ssize_t n = PyTuple_GET_SIZE(t);
        if (!overflow && k >= 0 && k < n) {
            PyObject *r = PyTuple_New(n);
            if (r == NULL) {
                return NULL;
            }
            PyObject **src = &PyTuple_GET_ITEM(t, 0);
            PyObject **dst = &PyTuple_GET_ITEM(r, 0);
            for (Py_ssize_t j = 0; j < n; j++) {
                PyObject *x = j == k ? v : src[j];
                Py_INCREF(x);
                dst[j] = x;
            }
            return r;
        }
    }
    if (check_configured(set_item_slow) < 0) {
        return NULL;
    }
    PyObject *fn = set_item_slow;
    Py_INCREF(fn);
    PyObject *r = PyObject_Vectorcall(fn, args, 3, NULL);
    Py_DECREF(fn);
    return r;
}

/* ------------------------------------------------------------------ encoding buffer */

typedef struct {
    unsigned char *p;
    Py_ssize_t len;
    Py_ssize_t cap;
    int heap;
} Buf;

#define BUF_STACK 4096

static int
buf_grow(Buf *b, Py_ssize_t need)
{
    Py_ssize_t cap = b->cap;
    while (cap - b->len < need) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    unsigned char *p;
    if (b->heap) {
        p = PyMem_Realloc(b->p, (size_t)cap);
    }
    else {
        p = PyMem_Malloc((size_t)cap);
        if (p != NULL) {
            memcpy(p, b->p, (size_t)b->len);
        }
    }
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->p = p;
    b->cap = cap;
    b->heap = 1;
    return 0;
}

static inline int
buf_reserve(Buf *b, Py_ssize_t need)
{
    if (b->cap - b->len >= need) {
        return 0;
    }
    return buf_grow(b, need);
}

static inline void
buf_free(Buf *b)
{
    if (b->heap) {
        PyMem_Free(b->p);
    }
}

/* LEB128 of an unsigned 64-bit value (at most 10 bytes); room must be reserved. */
static inline void
put_varint(Buf *b, uint64_t n)
{
    unsigned char *o = b->p + b->len;
    while (n >= 0x80) {
        *o++ = (unsigned char)(n | 0x80);
        n >>= 7;
    }
    *o++ = (unsigned char)n;
    b->len = o - b->p;
}

static int
buf_append(Buf *b, const void *data, Py_ssize_t n)
{
    if (buf_reserve(b, n) < 0) {
        return -1;
    }
    memcpy(b->p + b->len, data, (size_t)n);
    b->len += n;
    return 0;
}

/* ------------------------------------------------------------------ encoder */

/* 'i' and the zig-zag LEB128 varint of an exact int too large for 64 bits. */
static int
enc_bigint(Buf *b, PyObject *v, int negative)
{
    PyObject *one = PyLong_FromLong(1), *zz = NULL, *tmp = NULL, *bits = NULL, *bytes = NULL;
    int rc = -1;
    if (one == NULL) {
        return -1;
    }
    /* zz = v << 1 if v >= 0 else (-v << 1) - 1 */
    if (negative) {
        PyObject *neg = PyNumber_Negative(v);
        if (neg == NULL) {
            goto done;
        }
        tmp = PyNumber_Lshift(neg, one);
        Py_DECREF(neg);
        if (tmp == NULL) {
            goto done;
        }
        zz = PyNumber_Subtract(tmp, one);
    }
    else {
        zz = PyNumber_Lshift(v, one);
    }
    if (zz == NULL) {
        goto done;
    }
    bits = PyObject_CallMethod(zz, "bit_length", NULL);
    if (bits == NULL) {
        goto done;
    }
    size_t nbits = PyLong_AsSize_t(bits);
    if (nbits == (size_t)-1 && PyErr_Occurred()) {
        goto done;
    }
    size_t nbytes = (nbits + 7) / 8;
    bytes = PyObject_CallMethod(zz, "to_bytes", "ns", (Py_ssize_t)nbytes, "little");
    if (bytes == NULL) {
        goto done;
    }
    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(bytes);
    size_t ngroups = nbits == 0 ? 1 : (nbits + 6) / 7;
    if (buf_reserve(b, (Py_ssize_t)ngroups + 1) < 0) {
        goto done;
    }
    b->p[b->len++] = 'i';
    for (size_t g = 0; g < ngroups; g++) {
        size_t bit = g * 7, byte = bit / 8, shift = bit % 8;
        unsigned int w = byte < nbytes ? d[byte] : 0;
        if (byte + 1 < nbytes) {
            w |= (unsigned int)d[byte + 1] << 8;
        }
        unsigned char group = (unsigned char)((w >> shift) & 0x7F);
        b->p[b->len++] = g + 1 < ngroups ? (unsigned char)(group | 0x80) : group;
    }
    rc = 0;
done:
    Py_DECREF(one);
    Py_XDECREF(tmp);
    Py_XDECREF(zz);
    Py_XDECREF(bits);
    Py_XDECREF(bytes);
    return rc;
}

/* 'i' and the zig-zag varint of an int whose digits are its value (int, or a subclass
   that does not override __int__). */
static int
enc_int(Buf *b, PyObject *v)
{
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow) {
        if (PyLong_CheckExact(v)) {
            return enc_bigint(b, v, overflow < 0);
        }
        PyObject *exact = PyNumber_Long(v);
        if (exact == NULL) {
            return -1;
        }
        int rc = enc_bigint(b, exact, overflow < 0);
        Py_DECREF(exact);
        return rc;
    }
    uint64_t zz = x >= 0 ? (uint64_t)x << 1 : ((uint64_t)(-(x + 1)) << 1) | 1;
    if (buf_reserve(b, 11) < 0) {
        return -1;
    }
    b->p[b->len++] = 'i';
    put_varint(b, zz);
    return 0;
}

/* ------------------------------------------------------------------ record memo */

/*
 * A state shares most of its records with its parent (an immutable record is rebuilt only
 * along the path a step changed), and a search hashes (exact visited set) or encodes
 * (fingerprints) every generated state whole. memo_hash(cls) makes the records of class
 * cls remember, per object, their hash and their encoding in two direct-mapped tables
 * keyed by the object's address: a state's hash or encoding then costs its new records
 * only. Each table holds a reference to the object it remembers, so an address in it
 * cannot be reused by another object while the entry stands; a collision replaces the
 * entry. The values are exactly tuple's hash and enc()'s bytes, so nothing outside sees a
 * difference but the time (and at most MEMO_SIZE records kept alive per table).
 *
 * Small on purpose (256 entries): what the memo saves is a parent's records shared by its
 * successors, hashed or encoded one after another; a large table (4,096 entries until
 * issue 56's measurement) mostly holds records of states long gone, keeps them alive, and
 * frees them later, cold, when another record takes the entry. On controller-ref's first
 * 200,000 states 256 entries against 4,096: about 1.1x the states per CPU-second with either
 * visited set (docs/figures.md, 2026-11-29); 65,536 entries were 1.5x slower.
 */

#define MEMO_BITS 8
#define MEMO_SIZE (1 << MEMO_BITS)

typedef struct {
    PyObject *obj; /* a strong reference, or NULL */
    Py_hash_t hash;
} HashMemo;

typedef struct {
    PyObject *obj;   /* a strong reference, or NULL */
    PyObject *bytes; /* enc(obj) */
} EncMemo;

static HashMemo hash_memo[MEMO_SIZE];
static EncMemo enc_memo[MEMO_SIZE];

static inline size_t
memo_ix(PyObject *o)
{
    return (size_t)((((uint64_t)(uintptr_t)o >> 4) * 0x9E3779B97F4A7C15ULL) >> (64 - MEMO_BITS));
}

static Py_hash_t
memo_tuple_hash(PyObject *o)
{
    HashMemo *e = &hash_memo[memo_ix(o)];
    if (e->obj == o) {
        return e->hash;
    }
    Py_hash_t h = PyTuple_Type.tp_hash(o);
    if (h == -1) {
        return -1;
    }
    PyObject *old = e->obj;
    Py_INCREF(o);
    e->obj = o;
    e->hash = h;
    Py_XDECREF(old); /* last: a record's deallocation runs no code that hashes */
    return h;
}

static PyObject *
memo_hash(PyObject *module, PyObject *cls)
{
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "memo_hash() needs a tuple subclass");
        return NULL;
    }
    PyTypeObject *tp = (PyTypeObject *)cls;
    if (tp->tp_hash == memo_tuple_hash) {
        Py_RETURN_NONE;
    }
    /* only a record whose hash, length and iteration are tuple's own: its memo is exact */
    if (tp->tp_hash != PyTuple_Type.tp_hash || tp->tp_iter != PyTuple_Type.tp_iter || tp->tp_as_sequence == NULL
        || tp->tp_as_sequence->sq_length != PyTuple_Type.tp_as_sequence->sq_length) {
        PyErr_Format(PyExc_TypeError, "memo_hash(): %s overrides tuple's hash, length or iteration", tp->tp_name);
        return NULL;
    }
    tp->tp_hash = memo_tuple_hash;
    PyType_Modified(tp);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ record constructors */

/*
 * fast_new(cls, original, prefix, names, required, defaults, single): calls of the record class
 * cls build its instance here, without the Python frame of its generated __new__ (issue 56:
 * about 8 records built per state of controller-ref, 5% of the compiled search in that frame
 * and in tuple.__new__'s temporary tuples). Installed as the class's tp_vectorcall, which
 * CPython (3.9+) uses for a call of any type object; cls.__new__ stays what it was (pickle,
 * the codecs and an explicit cls.__new__(cls, ...) are unchanged).
 *
 * The instance is prefix + the positional and keyword arguments in the order of names, then
 * for each missing optional field its default (defaults: one per optional field, the last
 * len(defaults) of names), or, with defaults None, nothing more (a Record built without its
 * optional fields is the shorter tuple; the first missing one ends it). With single not None
 * and no field, every call returns single. Anything else (an unknown or repeated keyword, too
 * many or too few arguments, a subclass, a __new__ assigned since) takes the ordinary path
 * (type's tp_call), which raises what the generated __new__ raises.
 */
typedef struct {
    PyObject *original; /* cls.__dict__["__new__"] when installed */
    PyObject *prefix;   /* tuple */
    PyObject *names;    /* tuple of interned str */
    PyObject *defaults; /* tuple, or NULL: optional fields omitted */
    PyObject *single;   /* or NULL */
    Py_ssize_t required;
} NewSpec;

static PyObject *new_specs = NULL; /* {cls: capsule(NewSpec)} */
static PyObject *str_new = NULL;   /* "__new__", interned */

static PyObject *
new_slow(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    /* type(cls).__call__(cls, *args, **kwargs), as the call would have been */
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    PyObject *tuple = PyTuple_New(nargs), *kw = NULL, *result = NULL;
    if (tuple == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(tuple, i, args[i]);
    }
    if (nkw) {
        if ((kw = PyDict_New()) == NULL) {
            goto done;
        }
        for (Py_ssize_t k = 0; k < nkw; k++) {
            if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]) < 0) {
                goto done;
            }
        }
    }
    result = Py_TYPE(callable)->tp_call(callable, tuple, kw);
done:
    Py_DECREF(tuple);
    Py_XDECREF(kw);
    return result;
}

static PyObject *
new_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyTypeObject *tp = (PyTypeObject *)callable;
    PyObject *cap = PyDict_GetItemWithError(new_specs, callable); /* borrowed */
    if (cap == NULL) {
        return PyErr_Occurred() ? NULL : new_slow(callable, args, nargsf, kwnames);
    }
    NewSpec *spec = (NewSpec *)PyCapsule_GetPointer(cap, NULL);
    if (spec == NULL) {
        return NULL;
    }
    /* a __new__ assigned since it was installed: the ordinary call */
    if (tp->tp_dict == NULL || PyDict_GetItemWithError(tp->tp_dict, str_new) != spec->original) {
        return PyErr_Occurred() ? NULL : new_slow(callable, args, nargsf, kwnames);
    }
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    Py_ssize_t nnames = PyTuple_GET_SIZE(spec->names);
    if (spec->single != NULL) {
        if (nargs || nkw) {
            return new_slow(callable, args, nargsf, kwnames);
        }
        Py_INCREF(spec->single);
        return spec->single;
    }
    if (nargs > nnames || nkw > nnames) {
        return new_slow(callable, args, nargsf, kwnames);
    }
    PyObject *given[64];
    if (nnames > 64) {
        return new_slow(callable, args, nargsf, kwnames);
    }
    Py_ssize_t j;
    for (j = 0; j < nnames; j++) {
        given[j] = j < nargs ? args[j] : NULL;
    }
    PyObject **names = &PyTuple_GET_ITEM(spec->names, 0);
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        for (j = 0; j < nnames && names[j] != name; j++) {
        }
        if (j == nnames || given[j] != NULL) { /* unknown (or not interned), or given twice */
            return new_slow(callable, args, nargsf, kwnames);
        }
        given[j] = args[nargs + k];
    }
    Py_ssize_t nopt = nnames - spec->required, count = nnames;
    for (j = 0; j < spec->required; j++) {
        if (given[j] == NULL) { /* a required field missing: the ordinary call raises */
            return new_slow(callable, args, nargsf, kwnames);
        }
    }
    if (spec->defaults == NULL) {
        for (j = spec->required; j < nnames; j++) {
            if (given[j] == NULL) {
                break;
            }
        }
        count = j;
    }
    Py_ssize_t np = PyTuple_GET_SIZE(spec->prefix);
    PyObject *result = tp->tp_alloc(tp, np + count);
    if (result == NULL) {
        return NULL;
    }
    PyObject **dst = &PyTuple_GET_ITEM(result, 0);
    for (j = 0; j < np; j++) {
        PyObject *v = PyTuple_GET_ITEM(spec->prefix, j);
        Py_INCREF(v);
        dst[j] = v;
    }
    for (j = 0; j < count; j++) {
        PyObject *v = given[j];
        if (v == NULL) { /* an optional field missing, with a default */
            v = PyTuple_GET_ITEM(spec->defaults, j - (nnames - nopt));
        }
        Py_INCREF(v);
        dst[np + j] = v;
    }
    return result;
}

static void
new_spec_clear(NewSpec *spec)
{
    Py_XDECREF(spec->original);
    Py_XDECREF(spec->prefix);
    Py_XDECREF(spec->names);
    Py_XDECREF(spec->defaults);
    Py_XDECREF(spec->single);
    PyMem_Free(spec);
}

static void
new_spec_free(PyObject *cap)
{
    NewSpec *spec = (NewSpec *)PyCapsule_GetPointer(cap, NULL);
    if (spec != NULL) {
        new_spec_clear(spec);
    }
}

static PyObject *
fast_new(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError,
                        "fast_new(cls, original, prefix, names, required, defaults, single) takes 7 arguments");
        return NULL;
    }
    PyObject *cls = args[0], *original = args[1], *prefix = args[2], *names = args[3];
    PyObject *defaults = args[5], *single = args[6];
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type)
        || (PyTypeObject *)cls == &PyTuple_Type || Py_TYPE(cls) != &PyType_Type) {
        PyErr_SetString(PyExc_TypeError, "fast_new() needs a tuple subclass whose metaclass is type");
        return NULL;
    }
    if (!PyTuple_CheckExact(prefix) || !PyTuple_CheckExact(names) || PyTuple_GET_SIZE(names) > 64
        || (defaults != Py_None && !PyTuple_CheckExact(defaults))) {
        PyErr_SetString(PyExc_TypeError, "fast_new(): prefix and names tuples (at most 64 names), defaults a tuple or None");
        return NULL;
    }
    Py_ssize_t required = PyLong_AsSsize_t(args[4]), nnames = PyTuple_GET_SIZE(names);
    if (required == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (required < 0 || required > nnames
        || (defaults != Py_None && PyTuple_GET_SIZE(defaults) != nnames - required)) {
        PyErr_SetString(PyExc_ValueError, "fast_new(): required must be in 0..len(names), with one default per optional field");
        return NULL;
    }
    if (new_specs == NULL && (new_specs = PyDict_New()) == NULL) {
        return NULL;
    }
    if (str_new == NULL && (str_new = PyUnicode_InternFromString("__new__")) == NULL) {
        return NULL;
    }
    PyObject *interned = PyTuple_New(nnames);
    if (interned == NULL) {
        return NULL;
    }
    for (Py_ssize_t j = 0; j < nnames; j++) {
        PyObject *name = PyTuple_GET_ITEM(names, j);
        if (!PyUnicode_CheckExact(name)) {
            Py_DECREF(interned);
            PyErr_SetString(PyExc_TypeError, "fast_new(): names must be str");
            return NULL;
        }
        Py_INCREF(name);
        PyUnicode_InternInPlace(&name); /* as keyword names are: compared by identity */
        PyTuple_SET_ITEM(interned, j, name);
    }
    NewSpec *spec = (NewSpec *)PyMem_Calloc(1, sizeof(NewSpec));
    if (spec == NULL) {
        Py_DECREF(interned);
        return PyErr_NoMemory();
    }
    Py_INCREF(original);
    spec->original = original;
    Py_INCREF(prefix);
    spec->prefix = prefix;
    spec->names = interned;
    if (defaults != Py_None) {
        Py_INCREF(defaults);
        spec->defaults = defaults;
    }
    if (single != Py_None) {
        Py_INCREF(single);
        spec->single = single;
    }
    spec->required = required;
    PyObject *cap = PyCapsule_New(spec, NULL, new_spec_free);
    if (cap == NULL) {
        new_spec_clear(spec);
        return NULL;
    }
    int rc = PyDict_SetItem(new_specs, cls, cap);
    Py_DECREF(cap);
    if (rc < 0) {
        return NULL;
    }
    ((PyTypeObject *)cls)->tp_vectorcall = new_vectorcall;
    Py_RETURN_NONE;
}

static int enc(Buf *b, PyObject *v);
static int enc_tuple(Buf *b, PyObject *v);

static int
enc_other(Buf *b, PyObject *v)
{
    if (check_configured(encode_other) < 0) {
        return -1;
    }
    PyObject *fn = encode_other;
    Py_INCREF(fn); /* held across the call: the callee could reconfigure */
    PyObject *r = PyObject_CallOneArg(fn, v);
    Py_DECREF(fn);
    if (r == NULL) {
        return -1;
    }
    if (!PyBytes_Check(r)) {
        PyErr_Format(PyExc_TypeError, "the encode fallback returned a %s, not bytes", Py_TYPE(r)->tp_name);
        Py_DECREF(r);
        return -1;
    }
    int rc = buf_append(b, PyBytes_AS_STRING(r), PyBytes_GET_SIZE(r));
    Py_DECREF(r);
    return rc;
}

static int
enc_tuple(Buf *b, PyObject *v)
{
    Py_ssize_t n = PyTuple_GET_SIZE(v);
    if (buf_reserve(b, 11) < 0) {
        return -1;
    }
    b->p[b->len++] = 't';
    put_varint(b, (uint64_t)n);
    if (Py_EnterRecursiveCall(" while encoding a state")) {
        return -1;
    }
    int rc = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        if (enc(b, PyTuple_GET_ITEM(v, j)) < 0) {
            rc = -1;
            break;
        }
    }
    Py_LeaveRecursiveCall();
    return rc;
}

/* enc() of a record whose class memo_hash() marked: its bytes from the memo, or encoded and
 * remembered */
static int
enc_memoised(Buf *b, PyObject *v)
{
    EncMemo *e = &enc_memo[memo_ix(v)];
    if (e->obj == v) {
        return buf_append(b, PyBytes_AS_STRING(e->bytes), PyBytes_GET_SIZE(e->bytes));
    }
    Py_ssize_t start = b->len;
    if (enc_tuple(b, v) < 0) {
        return -1;
    }
    PyObject *bytes = PyBytes_FromStringAndSize((const char *)b->p + start, b->len - start);
    if (bytes == NULL) {
        return -1;
    }
    PyObject *old = e->obj, *old_bytes = e->bytes;
    Py_INCREF(v);
    e->obj = v;
    e->bytes = bytes;
    Py_XDECREF(old);
    Py_XDECREF(old_bytes);
    return 0;
}

static int
enc(Buf *b, PyObject *v)
{
    PyTypeObject *tp = Py_TYPE(v);
    if (tp == &PyTuple_Type) {
        return enc_tuple(b, v);
    }
    if (tp->tp_hash == memo_tuple_hash) {
        return enc_memoised(b, v);
    }
    if (tp == &PyLong_Type) {
        return enc_int(b, v);
    }
    if (v == Py_None) {
        if (buf_reserve(b, 1) < 0) {
            return -1;
        }
        b->p[b->len++] = 'N';
        return 0;
    }
    if (tp == &PyBool_Type) {
        return buf_append(b, v == Py_True ? "i\x02" : "i\x00", 2);
    }
    if (tp == &PyUnicode_Type) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(v, &n);
        if (s == NULL) {
            return -1;
        }
        if (buf_reserve(b, 11 + n) < 0) {
            return -1;
        }
        b->p[b->len++] = 's';
        put_varint(b, (uint64_t)n);
        memcpy(b->p + b->len, s, (size_t)n);
        b->len += n;
        return 0;
    }
    if (PyTuple_Check(v)) {
        /* NamedTuple records: len() and iteration are tuple's own unless overridden */
        if (tp->tp_iter == PyTuple_Type.tp_iter && tp->tp_as_sequence != NULL
            && tp->tp_as_sequence->sq_length == PyTuple_Type.tp_as_sequence->sq_length) {
            return enc_tuple(b, v);
        }
        return enc_other(b, v);
    }
    if (PyLong_Check(v)) {
        /* IntEnum members and other int subclasses: encoded as int(v) */
        if (tp->tp_as_number != NULL && tp->tp_as_number->nb_int == PyLong_Type.tp_as_number->nb_int) {
            return enc_int(b, v);
        }
        PyObject *exact = PyNumber_Long(v);
        if (exact == NULL) {
            return -1;
        }
        int rc = PyLong_CheckExact(exact) ? enc_int(b, exact) : enc_other(b, v);
        Py_DECREF(exact);
        return rc;
    }
    return enc_other(b, v);
}

/* ------------------------------------------------------------------ BLAKE2b (RFC 7693) */

static const uint64_t b2b_iv[8] = {
    0x6A09E667F3BCC908ULL, 0xBB67AE8584CAA73BULL, 0x3C6EF372FE94F82BULL, 0xA54FF53A5F1D36F1ULL,
    0x510E527FADE682D1ULL, 0x9B05688C2B3E6C1FULL, 0x1F83D9ABFB41BD6BULL, 0x5BE0CD19137E2179ULL,
};

static const uint8_t b2b_sigma[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

#define ROTR64(x, y) (((x) >> (y)) | ((x) << (64 - (y))))
#define B2B_G(a, b, c, d, x, y)                                                                        \
    do {                                                                                               \
        v[a] = v[a] + v[b] + (x);                                                                      \
        v[d] = ROTR64(v[d] ^ v[a], 32);                                                                \
        v[c] = v[c] + v[d];                                                                            \
        v[b] = ROTR64(v[b] ^ v[c], 24);                                                                \
        v[a] = v[a] + v[b] + (y);                                                                      \
        v[d] = ROTR64(v[d] ^ v[a], 16);                                                                \
        v[c] = v[c] + v[d];                                                                            \
        v[b] = ROTR64(v[b] ^ v[c], 63);                                                                \
    } while (0)

#define B2B_ROUND(r)                                                                                   \
    do {                                                                                               \
        B2B_G(0, 4, 8, 12, m[b2b_sigma[r][0]], m[b2b_sigma[r][1]]);                                    \
        B2B_G(1, 5, 9, 13, m[b2b_sigma[r][2]], m[b2b_sigma[r][3]]);                                    \
        B2B_G(2, 6, 10, 14, m[b2b_sigma[r][4]], m[b2b_sigma[r][5]]);                                   \
        B2B_G(3, 7, 11, 15, m[b2b_sigma[r][6]], m[b2b_sigma[r][7]]);                                   \
        B2B_G(0, 5, 10, 15, m[b2b_sigma[r][8]], m[b2b_sigma[r][9]]);                                   \
        B2B_G(1, 6, 11, 12, m[b2b_sigma[r][10]], m[b2b_sigma[r][11]]);                                 \
        B2B_G(2, 7, 8, 13, m[b2b_sigma[r][12]], m[b2b_sigma[r][13]]);                                  \
        B2B_G(3, 4, 9, 14, m[b2b_sigma[r][14]], m[b2b_sigma[r][15]]);                                  \
    } while (0)

static inline uint64_t
load64_le(const unsigned char *p)
{
    return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) | ((uint64_t)p[3] << 24)
           | ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) | ((uint64_t)p[6] << 48)
           | ((uint64_t)p[7] << 56);
}

static void
b2b_compress(uint64_t h[8], const unsigned char block[128], uint64_t t0, uint64_t t1, int last)
{
    uint64_t v[16], m[16];
    for (int i = 0; i < 8; i++) {
        v[i] = h[i];
        v[i + 8] = b2b_iv[i];
    }
    v[12] ^= t0;
    v[13] ^= t1;
    if (last) {
        v[14] = ~v[14];
    }
    for (int i = 0; i < 16; i++) {
        m[i] = load64_le(block + 8 * i);
    }
    /* the 12 rounds unrolled: b2b_sigma[r][k] with constant r, k folds to a constant index */
    B2B_ROUND(0);
    B2B_ROUND(1);
    B2B_ROUND(2);
    B2B_ROUND(3);
    B2B_ROUND(4);
    B2B_ROUND(5);
    B2B_ROUND(6);
    B2B_ROUND(7);
    B2B_ROUND(8);
    B2B_ROUND(9);
    B2B_ROUND(10);
    B2B_ROUND(11);
    for (int i = 0; i < 8; i++) {
        h[i] ^= v[i] ^ v[i + 8];
    }
}

/* BLAKE2b with an 8-byte digest and no key, returned as the little-endian integer of
   the digest: int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little"). */
static uint64_t
blake2b_64(const unsigned char *data, size_t len)
{
    uint64_t h[8];
    memcpy(h, b2b_iv, sizeof h);
    h[0] ^= 0x01010000ULL ^ 8; /* depth 1, fanout 1, no key, digest length 8 */
    uint64_t t0 = 0, t1 = 0;
    while (len > 128) {
        t0 += 128;
        if (t0 < 128) {
            t1++;
        }
        b2b_compress(h, data, t0, t1, 0);
        data += 128;
        len -= 128;
    }
    unsigned char last[128];
    memset(last, 0, sizeof last);
    memcpy(last, data, len);
    t0 += len;
    if (t0 < len) {
        t1++;
    }
    b2b_compress(h, last, t0, t1, 1);
    return h[0]; /* the digest is h[0]'s 8 bytes, little endian */
}

/* ------------------------------------------------------------------ FpTable */

/* A set of 64-bit fingerprints in one open-addressing array (explorer/search/visited.py
   is the pure-Python twin, with the same layout, so a saved table loads in either).
   Slot of a key: the high 64 bits of key * capacity (any capacity, not only powers of
   two); linear probing upwards, wrapping at the end; 0 marks an empty slot, so the
   fingerprint 0 is stored as 1. Grown by half when more than 4/5 full, by re-inserting
   the slots in order into the new array. */
typedef struct {
    PyObject_HEAD
    uint64_t *slots;
    Py_ssize_t cap;
    Py_ssize_t count;
    Py_ssize_t exports; /* buffers handed out: the array may not move while > 0 */
} FpTableObject;

static PyTypeObject FpTable_Type;

static inline Py_ssize_t
fpt_slot(uint64_t key, Py_ssize_t cap)
{
    return (Py_ssize_t)(((unsigned __int128)key * (unsigned __int128)(uint64_t)cap) >> 64);
}

/* 1 if inserted, 0 if present */
static inline int
fpt_put(uint64_t *slots, Py_ssize_t cap, uint64_t key)
{
    Py_ssize_t i = fpt_slot(key, cap);
    for (;;) {
        uint64_t v = slots[i];
        if (v == 0) {
            slots[i] = key;
            return 1;
        }
        if (v == key) {
            return 0;
        }
        if (++i == cap) {
            i = 0;
        }
    }
}

static inline Py_ssize_t
fpt_limit(Py_ssize_t cap)
{
    return cap - cap / 5; /* at most 4/5 full */
}

static int
fpt_grow(FpTableObject *self)
{
    if (self->exports > 0) {
        PyErr_SetString(PyExc_BufferError, "FpTable: cannot grow while its buffer is exported");
        return -1;
    }
    Py_ssize_t ncap = self->cap + self->cap / 2;
    uint64_t *n = (uint64_t *)PyMem_RawCalloc((size_t)ncap, sizeof(uint64_t));
    if (n == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < self->cap; i++) {
        uint64_t v = self->slots[i];
        if (v != 0) {
            fpt_put(n, ncap, v);
        }
    }
    PyMem_RawFree(self->slots);
    self->slots = n;
    self->cap = ncap;
    return 0;
}

static PyObject *
fpt_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"capacity", "data", "count", NULL};
    Py_ssize_t cap = 1024, count = 0;
    PyObject *data = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|nOn:FpTable", kwlist, &cap, &data, &count)) {
        return NULL;
    }
    if (cap < 8) {
        cap = 8;
    }
    FpTableObject *self = (FpTableObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->slots = (uint64_t *)PyMem_RawCalloc((size_t)cap, sizeof(uint64_t));
    if (self->slots == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    self->cap = cap;
    if (data != Py_None) {
        Py_buffer view;
        if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) {
            Py_DECREF(self);
            return NULL;
        }
        if (view.len != cap * (Py_ssize_t)sizeof(uint64_t)) {
            PyBuffer_Release(&view);
            Py_DECREF(self);
            PyErr_SetString(PyExc_ValueError, "FpTable: data is not capacity * 8 bytes");
            return NULL;
        }
        memcpy(self->slots, view.buf, (size_t)view.len);
        PyBuffer_Release(&view);
        self->count = count;
    }
    return (PyObject *)self;
}

static void
fpt_dealloc(FpTableObject *self)
{
    PyMem_RawFree(self->slots);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static inline int
fpt_key(PyObject *fp, uint64_t *key)
{
    uint64_t k = PyLong_AsUnsignedLongLong(fp);
    if (k == (uint64_t)-1 && PyErr_Occurred()) {
        return -1;
    }
    *key = k ? k : 1;
    return 0;
}

static int
fpt_insert(FpTableObject *self, uint64_t key)
{
    if (self->count >= fpt_limit(self->cap) && fpt_grow(self) < 0) {
        return -1;
    }
    int r = fpt_put(self->slots, self->cap, key);
    self->count += r;
    return r;
}

static PyObject *
fpt_add(FpTableObject *self, PyObject *fp)
{
    uint64_t key;
    if (fpt_key(fp, &key) < 0) {
        return NULL;
    }
    int r = fpt_insert(self, key);
    if (r < 0) {
        return NULL;
    }
    return PyBool_FromLong(r);
}

/* add_state(state): fingerprint the state (as fingerprint()) and insert it; the
   fingerprint if it was new, None if it was there */
static PyObject *
fpt_add_state(FpTableObject *self, PyObject *state)
{
    unsigned char stack[BUF_STACK];
    Buf b = {stack, 0, BUF_STACK, 0};
    if (enc(&b, state) < 0) {
        buf_free(&b);
        return NULL;
    }
    uint64_t f = blake2b_64(b.p, (size_t)b.len);
    buf_free(&b);
    int r = fpt_insert(self, f ? f : 1);
    if (r < 0) {
        return NULL;
    }
    if (r == 0) {
        Py_RETURN_NONE;
    }
    return PyLong_FromUnsignedLongLong(f);
}

static int
fpt_contains(FpTableObject *self, PyObject *fp)
{
    uint64_t key;
    if (fpt_key(fp, &key) < 0) {
        return -1;
    }
    Py_ssize_t i = fpt_slot(key, self->cap);
    for (;;) {
        uint64_t v = self->slots[i];
        if (v == 0) {
            return 0;
        }
        if (v == key) {
            return 1;
        }
        if (++i == self->cap) {
            i = 0;
        }
    }
}

static Py_ssize_t
fpt_len(FpTableObject *self)
{
    return self->count;
}

static int
fpt_getbuffer(FpTableObject *self, Py_buffer *view, int flags)
{
    int r = PyBuffer_FillInfo(view, (PyObject *)self, self->slots,
                              self->cap * (Py_ssize_t)sizeof(uint64_t), 1, flags);
    if (r == 0) {
        self->exports++;
    }
    return r;
}

static void
fpt_releasebuffer(FpTableObject *self, Py_buffer *view)
{
    self->exports--;
}

static PyBufferProcs fpt_as_buffer = {
    (getbufferproc)fpt_getbuffer,
    (releasebufferproc)fpt_releasebuffer,
};

static PySequenceMethods fpt_as_sequence = {
    .sq_length = (lenfunc)fpt_len,
    .sq_contains = (objobjproc)fpt_contains,
};

static PyMethodDef fpt_methods[] = {
    {"add", (PyCFunction)fpt_add, METH_O,
     "add(fp)\n--\n\nInsert the fingerprint fp: True if it was new, False if it was there."},
    {"add_state", (PyCFunction)fpt_add_state, METH_O,
     "add_state(state)\n--\n\nInsert fingerprint(state): the fingerprint if new, None if there."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef fpt_members[] = {
    {"capacity", T_PYSSIZET, offsetof(FpTableObject, cap), READONLY, "slots in the array"},
    {NULL},
};

static PyTypeObject FpTable_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "explorer._speedups.FpTable",
    .tp_doc = "FpTable(capacity=1024, data=None, count=0): a set of 64-bit fingerprints "
              "(open addressing, linear probing; the buffer is the slot array).",
    .tp_basicsize = sizeof(FpTableObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = fpt_new,
    .tp_dealloc = (destructor)fpt_dealloc,
    .tp_methods = fpt_methods,
    .tp_members = fpt_members,
    .tp_as_sequence = &fpt_as_sequence,
    .tp_as_buffer = &fpt_as_buffer,
};

/* ------------------------------------------------------------------ state packer */

/*
 * pack_states(states) -> (payload, atoms, classes)
 * unpack_states(payload, atoms, classes) -> states
 *
 * A compact, pickle-free serialisation of a list of model states (nested NamedTuples,
 * tuples, ints, ...), used for the blocks the spark engine ships between partitions
 * (explorer/search/statepack.py adds the header and the pure-Python fallback).
 *
 * The payload's grammar (varint = unsigned LEB128):
 *
 *   payload := varint(count) value{count}
 *   value   := 'N' | 'T' | 'F'                    None, True, False
 *            | 'i' varint(zigzag(x))              an exact int that fits in 64 bits
 *            | 's' varint(len) utf8[len]          an exact str                  (memoised)
 *            | '(' varint(n) value{n}             an exact tuple                (memoised)
 *            | 'c' varint(k) varint(n) value{n}   an instance of classes[k], a NamedTuple
 *                                                 class with no __dict__, rebuilt like
 *                                                 tuple.__new__(cls, items)     (memoised)
 *            | '{' varint(n) value{n}             an exact frozenset            (memoised)
 *            | 'a' varint(k)                      atoms[k]: anything else (enum members,
 *                                                 big ints, floats, ...), by identity;
 *                                                 the caller pickles the atom list
 *            | 'r' varint(m)                      the m-th memoised object of this payload
 *
 * Memoised objects are numbered in the order their encoding ends (children first), so
 * an object met again by identity is written as 'r' and decodes to the same object:
 * states keep sharing their sub-records, as with pickle's memo.
 */

#define PACK_MAX_DEPTH 200
#define PACK_NOT_NAMEDTUPLE UINT32_MAX /* class_ix value of a tuple subclass sent as an atom */

/* A map from object address to a 32-bit index (open addressing, linear probing; a key
 * and its value share a slot, so a probe touches one cache line). */
typedef struct {
    void *key; /* NULL: an empty slot */
    uint32_t val;
} PtrSlot;

typedef struct {
    PtrSlot *slots;
    size_t mask; /* capacity - 1, capacity a power of two */
    size_t used;
} PtrMap;

static inline size_t
ptr_slot(const PtrMap *m, const void *p)
{
    uint64_t h = ((uint64_t)(uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h ^ (h >> 32)) & m->mask;
}

static int
ptrmap_init(PtrMap *m, size_t cap)
{
    m->slots = PyMem_Calloc(cap, sizeof(PtrSlot));
    m->mask = cap - 1;
    m->used = 0;
    if (m->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void
ptrmap_free(PtrMap *m)
{
    PyMem_Free(m->slots);
    m->slots = NULL;
}

/* The index stored for p, or -1 if none. */
static inline int64_t
ptrmap_get(const PtrMap *m, const void *p)
{
    size_t i = ptr_slot(m, p);
    while (m->slots[i].key != NULL) {
        if (m->slots[i].key == p) {
            return m->slots[i].val;
        }
        i = (i + 1) & m->mask;
    }
    return -1;
}

/* Store p -> v (p must be absent); doubles the table when half full. */
static int
ptrmap_put(PtrMap *m, void *p, uint32_t v)
{
    if ((m->used + 1) * 2 > m->mask + 1) {
        PtrMap big;
        if (ptrmap_init(&big, (m->mask + 1) * 2) < 0) {
            return -1;
        }
        for (size_t j = 0; j <= m->mask; j++) {
            if (m->slots[j].key != NULL) {
                size_t i = ptr_slot(&big, m->slots[j].key);
                while (big.slots[i].key != NULL) {
                    i = (i + 1) & big.mask;
                }
                big.slots[i] = m->slots[j];
            }
        }
        big.used = m->used;
        ptrmap_free(m);
        *m = big;
    }
    size_t i = ptr_slot(m, p);
    while (m->slots[i].key != NULL) {
        i = (i + 1) & m->mask;
    }
    m->slots[i].key = p;
    m->slots[i].val = v;
    m->used++;
    return 0;
}

/* 1 if instances of tuple subclass tp are exactly a tuple's items (a NamedTuple made with
 * __slots__ = (), as collections.namedtuple and typing.NamedTuple do): no __dict__, no
 * extra slots, so tp_alloc + the items rebuilds them. 0 otherwise, -1 on error. */
static int
is_plain_namedtuple(PyTypeObject *tp)
{
    if (!PyType_IsSubtype(tp, &PyTuple_Type) || tp->tp_dictoffset != 0 || tp->tp_weaklistoffset != 0 ||
        tp->tp_basicsize != PyTuple_Type.tp_basicsize || tp->tp_itemsize != PyTuple_Type.tp_itemsize ||
        !(tp->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
        return 0;
    }
    return PyObject_HasAttrString((PyObject *)tp, "_fields");
}

typedef struct {
    Buf b;
    PtrMap memo;       /* memoised object -> its memo number */
    uint32_t nmemo;
    PtrMap atom_ix;    /* atom -> its index in atoms */
    PyObject *atoms;   /* list */
    PtrMap class_ix;   /* tuple subclass -> its index in classes, or PACK_NOT_NAMEDTUPLE */
    PyObject *classes; /* list */
} Packer;

static int
pk_atom(Packer *pk, PyObject *v)
{
    int64_t k = ptrmap_get(&pk->atom_ix, v);
    if (k < 0) {
        k = PyList_GET_SIZE(pk->atoms);
        if (PyList_Append(pk->atoms, v) < 0 || ptrmap_put(&pk->atom_ix, v, (uint32_t)k) < 0) {
            return -1;
        }
    }
    if (buf_reserve(&pk->b, 11) < 0) {
        return -1;
    }
    pk->b.p[pk->b.len++] = 'a';
    put_varint(&pk->b, (uint64_t)k);
    return 0;
}

/* The classes index of tuple subclass tp, PACK_NOT_NAMEDTUPLE, or -1 on error. */
static int64_t
pk_class(Packer *pk, PyTypeObject *tp)
{
    int64_t k = ptrmap_get(&pk->class_ix, tp);
    if (k >= 0) {
        return k;
    }
    int plain = is_plain_namedtuple(tp);
    if (plain < 0) {
        return -1;
    }
    k = plain ? PyList_GET_SIZE(pk->classes) : PACK_NOT_NAMEDTUPLE;
    if ((plain && PyList_Append(pk->classes, (PyObject *)tp) < 0) || ptrmap_put(&pk->class_ix, tp, (uint32_t)k) < 0) {
        return -1;
    }
    return k;
}

static int
pk_value(Packer *pk, PyObject *v, int depth)
{
    Buf *b = &pk->b;
    if (depth > PACK_MAX_DEPTH) {
        PyErr_Format(PyExc_ValueError, "pack_states: a state is nested deeper than %d levels", PACK_MAX_DEPTH);
        return -1;
    }
    if (buf_reserve(b, 22) < 0) {
        return -1;
    }
    if (v == Py_None || v == Py_True || v == Py_False) {
        b->p[b->len++] = v == Py_None ? 'N' : v == Py_True ? 'T' : 'F';
        return 0;
    }
    PyTypeObject *tp = Py_TYPE(v);
    if (tp == &PyLong_Type) {
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow) {
            return pk_atom(pk, v); /* a big int: pickled with the atoms */
        }
        if (x == -1 && PyErr_Occurred()) {
            return -1;
        }
        b->p[b->len++] = 'i';
        put_varint(b, ((uint64_t)x << 1) ^ (uint64_t)(x >> 63));
        return 0;
    }
    int64_t cls = -1;
    if (tp != &PyUnicode_Type && tp != &PyTuple_Type && tp != &PyFrozenSet_Type) {
        if (!PyTuple_Check(v)) {
            return pk_atom(pk, v);
        }
        cls = pk_class(pk, tp);
        if (cls < 0) {
            return -1;
        }
        if (cls == PACK_NOT_NAMEDTUPLE) {
            return pk_atom(pk, v);
        }
    }
    /* a memoised kind: met before in this payload? */
    int64_t m = ptrmap_get(&pk->memo, v);
    if (m >= 0) {
        b->p[b->len++] = 'r';
        put_varint(b, (uint64_t)m);
        return 0;
    }
    if (tp == &PyUnicode_Type) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(v, &n);
        if (s == NULL) { /* lone surrogates: let pickle carry it */
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
                return -1;
            }
            PyErr_Clear();
            return pk_atom(pk, v);
        }
        b->p[b->len++] = 's';
        put_varint(b, (uint64_t)n);
        if (buf_append(b, s, n) < 0) {
            return -1;
        }
    }
    else if (tp == &PyFrozenSet_Type) {
        b->p[b->len++] = '{';
        put_varint(b, (uint64_t)PySet_GET_SIZE(v));
        PyObject *it = PyObject_GetIter(v);
        if (it == NULL) {
            return -1;
        }
        PyObject *item;
        while ((item = PyIter_Next(it)) != NULL) {
            int r = pk_value(pk, item, depth + 1);
            Py_DECREF(item);
            if (r < 0) {
                Py_DECREF(it);
                return -1;
            }
        }
        Py_DECREF(it);
        if (PyErr_Occurred()) {
            return -1;
        }
    }
    else { /* a tuple, or an instance of classes[cls] */
        Py_ssize_t n = PyTuple_GET_SIZE(v);
        if (cls < 0) {
            b->p[b->len++] = '(';
        }
        else {
            b->p[b->len++] = 'c';
            put_varint(b, (uint64_t)cls);
        }
        put_varint(b, (uint64_t)n);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (pk_value(pk, PyTuple_GET_ITEM(v, i), depth + 1) < 0) {
                return -1;
            }
        }
    }
    if (pk->nmemo == UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "pack_states: too many objects in one block");
        return -1;
    }
    return ptrmap_put(&pk->memo, v, pk->nmemo++);
}

static PyObject *
pack_states(PyObject *module, PyObject *states)
{
    if (!PyList_Check(states)) {
        PyErr_Format(PyExc_TypeError, "pack_states needs a list of states, not %.100s", Py_TYPE(states)->tp_name);
        return NULL;
    }
    PyObject *items = PyList_AsTuple(states); /* holds the states while we encode them */
    if (items == NULL) {
        return NULL;
    }
    Packer pk = {{NULL, 0, 0, 1}, {0}, 0, {0}, NULL, {0}, NULL};
    PyObject *result = NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(items);
    pk.b.cap = 64 + 128 * (n < 65536 ? n : 65536); /* ~a controller state's size; it doubles as needed */
    pk.b.p = PyMem_Malloc((size_t)pk.b.cap);
    if (pk.b.p == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (ptrmap_init(&pk.memo, 1024) < 0 || ptrmap_init(&pk.atom_ix, 64) < 0 || ptrmap_init(&pk.class_ix, 64) < 0) {
        goto done;
    }
    pk.atoms = PyList_New(0);
    pk.classes = PyList_New(0);
    if (pk.atoms == NULL || pk.classes == NULL) {
        goto done;
    }
    put_varint(&pk.b, (uint64_t)n);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (pk_value(&pk, PyTuple_GET_ITEM(items, i), 0) < 0) {
            goto done;
        }
    }
    PyObject *payload = PyBytes_FromStringAndSize((const char *)pk.b.p, pk.b.len);
    if (payload != NULL) {
        result = PyTuple_Pack(3, payload, pk.atoms, pk.classes);
        Py_DECREF(payload);
    }
done:
    Py_DECREF(items);
    PyMem_Free(pk.b.p);
    ptrmap_free(&pk.memo);
    ptrmap_free(&pk.atom_ix);
    ptrmap_free(&pk.class_ix);
    Py_XDECREF(pk.atoms);
    Py_XDECREF(pk.classes);
    return result;
}

typedef struct {
    const unsigned char *p;
    const unsigned char *end;
    PyObject **memo; /* strong references, in memo order */
    Py_ssize_t nmemo;
    Py_ssize_t capmemo;
    PyObject **atoms;
    Py_ssize_t natoms;
    PyObject **classes;
    Py_ssize_t nclasses;
} Unpacker;

static PyObject *
up_corrupt(const char *what)
{
    PyErr_Format(PyExc_ValueError, "unpack_states: corrupt state payload (%s)", what);
    return NULL;
}

/* Read a varint into *out; -1 (ValueError set) if truncated or over 64 bits. */
static int
up_varint(Unpacker *u, uint64_t *out)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (u->p >= u->end) {
            up_corrupt("truncated");
            return -1;
        }
        unsigned char c = *u->p++;
        x |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80)) {
            *out = x;
            return 0;
        }
    }
    up_corrupt("varint over 64 bits");
    return -1;
}

/* Read a count of items that follow: each takes at least one byte, so a count beyond the
 * bytes left is corrupt (this bounds every allocation by the payload's size). */
static int
up_count(Unpacker *u, Py_ssize_t *out)
{
    uint64_t n;
    if (up_varint(u, &n) < 0) {
        return -1;
    }
    if (n > (uint64_t)(u->end - u->p)) {
        up_corrupt("count beyond the payload");
        return -1;
    }
    *out = (Py_ssize_t)n;
    return 0;
}

/* Remember obj (a new reference is taken) as the next memoised object. */
static int
up_memo(Unpacker *u, PyObject *obj)
{
    if (u->nmemo == u->capmemo) {
        Py_ssize_t cap = u->capmemo ? u->capmemo * 2 : 1024;
        PyObject **m = PyMem_Realloc(u->memo, (size_t)cap * sizeof(PyObject *));
        if (m == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        u->memo = m;
        u->capmemo = cap;
    }
    Py_INCREF(obj);
    u->memo[u->nmemo++] = obj;
    return 0;
}

static PyObject *up_value(Unpacker *u, int depth);

/* Fill the n items of the fresh tuple (or tuple subclass instance) t; steals t. */
static PyObject *
up_items(Unpacker *u, PyObject *t, Py_ssize_t n, int depth)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = up_value(u, depth + 1);
        if (item == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, item);
    }
    if (up_memo(u, t) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return t;
}

static PyObject *
up_value(Unpacker *u, int depth)
{
    if (depth > PACK_MAX_DEPTH) {
        return up_corrupt("nested too deep");
    }
    if (u->p >= u->end) {
        return up_corrupt("truncated");
    }
    unsigned char tag = *u->p++;
    uint64_t k;
    Py_ssize_t n;
    switch (tag) {
    case 'N':
        Py_RETURN_NONE;
    case 'T':
        Py_RETURN_TRUE;
    case 'F':
        Py_RETURN_FALSE;
    case 'i':
        if (up_varint(u, &k) < 0) {
            return NULL;
        }
        return PyLong_FromLongLong((long long)((k >> 1) ^ (~(k & 1) + 1)));
    case 's': {
        if (up_count(u, &n) < 0) {
            return NULL;
        }
        PyObject *s = PyUnicode_DecodeUTF8((const char *)u->p, n, NULL);
        if (s == NULL) {
            return NULL;
        }
        u->p += n;
        if (up_memo(u, s) < 0) {
            Py_DECREF(s);
            return NULL;
        }
        return s;
    }
    case '(': {
        if (up_count(u, &n) < 0) {
            return NULL;
        }
        PyObject *t = PyTuple_New(n);
        return t == NULL ? NULL : up_items(u, t, n, depth);
    }
    case 'c': {
        if (up_varint(u, &k) < 0 || up_count(u, &n) < 0) {
            return NULL;
        }
        if (k >= (uint64_t)u->nclasses) {
            return up_corrupt("class index out of range");
        }
        /* tuple.__new__(cls, items): the class's allocator, then the items */
        PyTypeObject *cls = (PyTypeObject *)u->classes[k];
        PyObject *t = cls->tp_alloc(cls, n);
        return t == NULL ? NULL : up_items(u, t, n, depth);
    }
    case '{': {
        if (up_count(u, &n) < 0) {
            return NULL;
        }
        PyObject *fs = PyFrozenSet_New(NULL);
        if (fs == NULL) {
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *item = up_value(u, depth + 1);
            if (item == NULL || PySet_Add(fs, item) < 0) {
                Py_XDECREF(item);
                Py_DECREF(fs);
                return NULL;
            }
            Py_DECREF(item);
        }
        if (up_memo(u, fs) < 0) {
            Py_DECREF(fs);
            return NULL;
        }
        return fs;
    }
    case 'a':
        if (up_varint(u, &k) < 0) {
            return NULL;
        }
        if (k >= (uint64_t)u->natoms) {
            return up_corrupt("atom index out of range");
        }
        return Py_NewRef(u->atoms[k]);
    case 'r':
        if (up_varint(u, &k) < 0) {
            return NULL;
        }
        if (k >= (uint64_t)u->nmemo) {
            return up_corrupt("back-reference out of range");
        }
        return Py_NewRef(u->memo[k]);
    default:
        return up_corrupt("unknown tag");
    }
}

static PyObject *
unpack_states(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "unpack_states(payload, atoms, classes) takes 3 arguments");
        return NULL;
    }
    if (!PyList_Check(args[1]) || !PyList_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "unpack_states: atoms and classes must be lists");
        return NULL;
    }
    /* private copies: nothing the decoding runs (hashing frozenset items) can change them */
    PyObject *atoms = PyList_AsTuple(args[1]);
    PyObject *classes = PyList_AsTuple(args[2]);
    PyObject *result = NULL;
    Py_buffer view = {0};
    Unpacker u = {0};
    if (atoms == NULL || classes == NULL || PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(classes); i++) {
        PyObject *c = PyTuple_GET_ITEM(classes, i);
        int ok = PyType_Check(c) ? is_plain_namedtuple((PyTypeObject *)c) : 0;
        if (ok <= 0) {
            if (ok == 0) {
                PyErr_Format(PyExc_ValueError, "unpack_states: class %R is not a NamedTuple class", c);
            }
            goto done;
        }
    }
    u.p = (const unsigned char *)view.buf;
    u.end = u.p + view.len;
    u.atoms = &PyTuple_GET_ITEM(atoms, 0);
    u.natoms = PyTuple_GET_SIZE(atoms);
    u.classes = &PyTuple_GET_ITEM(classes, 0);
    u.nclasses = PyTuple_GET_SIZE(classes);
    Py_ssize_t n;
    if (up_count(&u, &n) < 0) {
        goto done;
    }
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = up_value(&u, 0);
        if (s == NULL) {
            Py_DECREF(out);
            goto done;
        }
        PyList_SET_ITEM(out, i, s);
    }
    if (u.p != u.end) {
        Py_DECREF(out);
        up_corrupt("trailing bytes");
        goto done;
    }
    result = out;
done:
    for (Py_ssize_t i = 0; i < u.nmemo; i++) {
        Py_DECREF(u.memo[i]);
    }
    PyMem_Free(u.memo);
    if (view.obj != NULL) {
        PyBuffer_Release(&view);
    }
    Py_XDECREF(atoms);
    Py_XDECREF(classes);
    return result;
}

/* ------------------------------------------------------------------ module functions */

static PyObject *
encode(PyObject *module, PyObject *value)
{
    unsigned char stack[BUF_STACK];
    Buf b = {stack, 0, BUF_STACK, 0};
    if (enc(&b, value) < 0) {
        buf_free(&b);
        return NULL;
    }
    PyObject *r = PyBytes_FromStringAndSize((const char *)b.p, b.len);
    buf_free(&b);
    return r;
}

static PyObject *
fingerprint(PyObject *module, PyObject *value)
{
    unsigned char stack[BUF_STACK];
    Buf b = {stack, 0, BUF_STACK, 0};
    if (enc(&b, value) < 0) {
        buf_free(&b);
        return NULL;
    }
    uint64_t f = blake2b_64(b.p, (size_t)b.len);
    buf_free(&b);
    return PyLong_FromUnsignedLongLong(f);
}

static PyObject *
fingerprint_bytes(PyObject *module, PyObject *data)
{
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    uint64_t f = blake2b_64((const unsigned char *)view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLongLong(f);
}

static PyMethodDef speedups_methods[] = {
    {"set_item", (PyCFunction)(void (*)(void))set_item, METH_FASTCALL,
     "set_item(t, i, v)\n--\n\nReturn (*t[:i], v, *t[i + 1:])."},
    {"encode", (PyCFunction)encode, METH_O,
     "encode(value)\n--\n\nReturn explorer.encoding.encode(value)."},
    {"fingerprint", (PyCFunction)fingerprint, METH_O,
     "fingerprint(value)\n--\n\nReturn explorer.encoding.fingerprint(value)."},
    {"fingerprint_bytes", (PyCFunction)fingerprint_bytes, METH_O,
     "fingerprint_bytes(data)\n--\n\nReturn explorer.encoding.fingerprint_bytes(data)."},
    {"pack_states", (PyCFunction)pack_states, METH_O,
     "pack_states(states)\n--\n\nReturn (payload, atoms, classes): the list of states packed "
     "(see the grammar in _speedups.c); atoms and classes are to be pickled with the payload."},
    {"unpack_states", (PyCFunction)(void (*)(void))unpack_states, METH_FASTCALL,
     "unpack_states(payload, atoms, classes)\n--\n\nReturn the list of states pack_states packed."},
    {"memo_hash", (PyCFunction)memo_hash, METH_O,
     "memo_hash(cls)\n--\n\nMake the records of the tuple subclass cls remember their hash and "
     "their encoding per object (same values as tuple's hash and encode)."},
    {"fast_new", (PyCFunction)(void (*)(void))fast_new, METH_FASTCALL,
     "fast_new(cls, original, prefix, names, required, defaults, single)\n--\n\n"
     "Build the instances of the record class cls in C when it is called (see _speedups.c)."},
    {"_configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL,
     "_configure(encode_other, set_item_slow)\n--\n\n"
     "Set the Python fallbacks: encode_other(value) -> bytes for values not encoded here, "
     "set_item_slow(t, i, v) for set_item arguments outside the fast path."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "explorer._speedups",
    .m_doc = "Optional C accelerators for kafka-mc (see explorer/speedups.py).",
    .m_size = -1,
    .m_methods = speedups_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    if (PyType_Ready(&FastReplace_Type) < 0 || PyType_Ready(&FpTable_Type) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&speedups_module);
    if (m == NULL) {
        return NULL;
    }
    Py_INCREF(&FastReplace_Type);
    if (PyModule_AddObject(m, "FastReplace", (PyObject *)&FastReplace_Type) < 0) {
        Py_DECREF(&FastReplace_Type);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&FpTable_Type);
    if (PyModule_AddObject(m, "FpTable", (PyObject *)&FpTable_Type) < 0) {
        Py_DECREF(&FpTable_Type);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
