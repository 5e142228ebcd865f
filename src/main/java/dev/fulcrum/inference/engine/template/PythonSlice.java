package dev.fulcrum.inference.engine.template;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import com.hubspot.jinjava.objects.collections.PyList;

import jinjava.de.odysseus.el.tree.Bindings;
import jinjava.de.odysseus.el.tree.impl.ast.AstNode;
import jinjava.de.odysseus.el.tree.impl.ast.AstRightValue;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELException;

/** {@code base[start:stop:step]} of a list or a string, with Python's defaults and clamping. */
final class PythonSlice extends AstRightValue {
    private final AstNode base;
    private final AstNode start;
    private final AstNode stop;
    private final AstNode step;

    PythonSlice(AstNode base, AstNode start, AstNode stop, AstNode step) {
        this.base = base;
        this.start = start;
        this.stop = stop;
        this.step = step;
    }

    @Override
    public Object eval(Bindings bindings, ELContext context) {
        Object value = base.eval(bindings, context);
        List<?> items;
        if (value instanceof CharSequence) {
            String text = value.toString();
            StringBuilder out = new StringBuilder();
            for (int i : indices(text.length(), bindings, context)) {
                out.append(text.charAt(i));
            }
            return out.toString();
        } else if (value instanceof List) {
            items = (List<?>) value;
        } else if (value instanceof Iterable) {
            items = new ArrayList<>();
            ((Iterable<?>) value).forEach(((List<Object>) items)::add);
        } else if (value instanceof Object[]) {
            items = Arrays.asList((Object[]) value);
        } else {
            throw new ELException("'" + PythonValues.typeName(value) + "' object is not subscriptable");
        }
        List<Object> slice = new ArrayList<>();
        for (int i : indices(items.size(), bindings, context)) {
            slice.add(items.get(i));
        }
        return new PyList(slice);
    }

    /** CPython's {@code PySlice_AdjustIndices}, then the indices it walks. */
    private int[] indices(int length, Bindings bindings, ELContext context) {
        int by = bound(step, 1, bindings, context);
        if (by == 0) {
            throw new ELException("slice step cannot be zero");
        }
        int from = start == null ? (by < 0 ? length - 1 : 0) : adjust(bound(start, 0, bindings, context), length, by);
        int to = stop == null ? (by < 0 ? -1 : length) : adjust(bound(stop, 0, bindings, context), length, by);
        List<Integer> indices = new ArrayList<>();
        for (int i = from; by > 0 ? i < to : i > to; i += by) {
            indices.add(i);
        }
        return indices.stream().mapToInt(Integer::intValue).toArray();
    }

    private static int adjust(int index, int length, int step) {
        if (index < 0) {
            index += length;
            return index < 0 ? (step < 0 ? -1 : 0) : index;
        }
        return index >= length ? (step < 0 ? length - 1 : length) : index;
    }

    private static int bound(AstNode node, int absent, Bindings bindings, ELContext context) {
        Object value = node == null ? null : node.eval(bindings, context);
        if (value == null) {
            return absent;
        }
        if (!(value instanceof Number)) {
            throw new ELException("slice indices must be integers or None");
        }
        return ((Number) value).intValue();
    }

    @Override
    public void appendStructure(StringBuilder out, Bindings bindings) {
        base.appendStructure(out, bindings);
        out.append('[');
        appendBound(out, start, bindings);
        out.append(':');
        appendBound(out, stop, bindings);
        if (step != null) {
            out.append(':');
            step.appendStructure(out, bindings);
        }
        out.append(']');
    }

    private static void appendBound(StringBuilder out, AstNode node, Bindings bindings) {
        if (node != null) {
            node.appendStructure(out, bindings);
        }
    }

    @Override
    public int getCardinality() {
        return 4;
    }

    @Override
    public AstNode getChild(int i) {
        return i == 0 ? base : i == 1 ? start : i == 2 ? stop : i == 3 ? step : null;
    }

    @Override
    public String toString() {
        return "[:]";
    }
}
