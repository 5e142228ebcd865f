package dev.fulcrum.inference.engine.template;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.StringJoiner;

import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELException;

/**
 * Python's {@code str} methods on template strings ({@code message.content.strip()}, {@code .split('</think>')},
 * {@code .startswith(...)}): chat templates are written against Jinja2, where a string is a Python string, while
 * Jinjava would call the Java method of that name, if any ({@code split} takes a regular expression there, and
 * {@code startswith} does not exist). A method Python's {@code str} lacks fails, as in Jinja2.
 */
final class PythonStrings extends ReadOnlyResolver {

    @Override
    public Object invoke(ELContext context, Object base, Object method, Class<?>[] paramTypes, Object[] params) {
        if (!(base instanceof CharSequence) || method == null) {
            return null;
        }
        String text = base.toString();
        Object[] args = params == null ? new Object[0] : params;
        Object result = call(text, method.toString(), args);
        context.setPropertyResolved(true);
        return result;
    }

    private static Object call(String text, String method, Object[] args) {
        switch (method) {
            case "strip":
                return strip(text, chars(args), true, true);
            case "lstrip":
                return strip(text, chars(args), true, false);
            case "rstrip":
                return strip(text, chars(args), false, true);
            case "split":
                return split(text, args.length > 0 ? (String) args[0] : null, args.length > 1 ? toInt(args[1]) : -1);
            case "startswith":
                return anyOf(args[0], text::startsWith);
            case "endswith":
                return anyOf(args[0], text::endsWith);
            case "upper":
                return text.toUpperCase(Locale.ROOT);
            case "lower":
                return text.toLowerCase(Locale.ROOT);
            case "title":
                return title(text);
            case "capitalize":
                return text.isEmpty() ? text
                        : text.substring(0, 1).toUpperCase(Locale.ROOT) + text.substring(1).toLowerCase(Locale.ROOT);
            case "replace":
                return replace(text, (String) args[0], (String) args[1], args.length > 2 ? toInt(args[2]) : -1);
            case "join":
                return join(text, args[0]);
            case "find":
                return text.indexOf((String) args[0]);
            case "count":
                return count(text, (String) args[0]);
            case "isspace":
                return !text.isEmpty() && text.chars().allMatch(c -> isSpace((char) c));
            case "isdigit":
                return !text.isEmpty() && text.chars().allMatch(Character::isDigit);
            default:
                throw new ELException("'str' object has no attribute '" + method + "'");
        }
    }

    private static String chars(Object[] args) {
        return args.length == 0 || args[0] == null ? null : args[0].toString();
    }

    /** {@code str.strip([chars])}: without chars, Python's whitespace (Unicode spaces and separators too). */
    static String strip(String text, String chars, boolean left, boolean right) {
        int start = 0;
        int end = text.length();
        while (left && start < end && strippable(text.charAt(start), chars)) {
            start++;
        }
        while (right && end > start && strippable(text.charAt(end - 1), chars)) {
            end--;
        }
        return text.substring(start, end);
    }

    private static boolean strippable(char c, String chars) {
        return chars == null ? isSpace(c) : chars.indexOf(c) >= 0;
    }

    /** Python's {@code str.isspace} for one character. */
    private static boolean isSpace(char c) {
        return Character.isWhitespace(c) || Character.isSpaceChar(c) || c == '\u0085';
    }

    /** {@code str.split(sep=None, maxsplit=-1)}: without sep, runs of whitespace split and empty parts drop. */
    static List<String> split(String text, String separator, int maxSplit) {
        List<String> parts = new ArrayList<>();
        if (separator == null) {
            int i = 0;
            while (true) {
                while (i < text.length() && isSpace(text.charAt(i))) {
                    i++;
                }
                if (i == text.length()) {
                    return parts;
                }
                if (maxSplit >= 0 && parts.size() == maxSplit) {
                    parts.add(text.substring(i)); // the rest as it is, trailing whitespace included
                    return parts;
                }
                int start = i;
                while (i < text.length() && !isSpace(text.charAt(i))) {
                    i++;
                }
                parts.add(text.substring(start, i));
            }
        }
        if (separator.isEmpty()) {
            throw new ELException("empty separator");
        }
        int start = 0;
        int found;
        while ((maxSplit < 0 || parts.size() < maxSplit) && (found = text.indexOf(separator, start)) >= 0) {
            parts.add(text.substring(start, found));
            start = found + separator.length();
        }
        parts.add(text.substring(start));
        return parts;
    }

    private interface Test {
        boolean test(String prefix);
    }

    /** {@code startswith} and {@code endswith} take one string or a tuple of them. */
    private static boolean anyOf(Object prefixes, Test test) {
        if (prefixes instanceof Collection) {
            for (Object prefix : (Collection<?>) prefixes) {
                if (test.test(prefix.toString())) {
                    return true;
                }
            }
            return false;
        }
        return test.test(prefixes.toString());
    }

    private static String title(String text) {
        StringBuilder out = new StringBuilder(text.length());
        boolean previousCased = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            out.append(previousCased ? Character.toLowerCase(c) : Character.toTitleCase(c));
            previousCased = Character.isLetter(c);
        }
        return out.toString();
    }

    private static String replace(String text, String old, String replacement, int count) {
        if (count < 0) {
            return text.replace(old, replacement);
        }
        StringBuilder out = new StringBuilder();
        int start = 0;
        for (int n = 0; n < count; n++) {
            int found = text.indexOf(old, start);
            if (found < 0) {
                break;
            }
            out.append(text, start, found).append(replacement);
            start = found + old.length();
            if (old.isEmpty()) {
                if (start < text.length()) {
                    out.append(text.charAt(start));
                }
                start++;
            }
        }
        return start > text.length() ? out.toString() : out.append(text.substring(start)).toString();
    }

    private static String join(String separator, Object items) {
        StringJoiner joined = new StringJoiner(separator);
        Iterator<?> it = items instanceof Iterable ? ((Iterable<?>) items).iterator()
                : List.of((Object[]) items).iterator();
        while (it.hasNext()) {
            Object item = it.next();
            if (!(item instanceof CharSequence)) {
                throw new ELException(
                        "sequence item: expected str instance, " + PythonValues.typeName(item) + " found");
            }
            joined.add(item.toString());
        }
        return joined.toString();
    }

    private static int count(String text, String part) {
        if (part.isEmpty()) {
            return text.length() + 1;
        }
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + part.length())) {
            n++;
        }
        return n;
    }

    private static int toInt(Object value) {
        return ((Number) value).intValue();
    }

    /** {@code text[i]}, negative indices counted from the end; out of range is undefined, as in Jinja2. */
    @Override
    public Object getValue(ELContext context, Object base, Object property) {
        // Jinjava passes the index as text
        if (!(base instanceof CharSequence) || property == null || !property.toString().matches("-?[0-9]{1,9}")) {
            return null;
        }
        context.setPropertyResolved(true);
        int length = ((CharSequence) base).length();
        int index = Integer.parseInt(property.toString());
        index = index < 0 ? index + length : index;
        return index >= 0 && index < length ? String.valueOf(((CharSequence) base).charAt(index)) : null;
    }
}
