package dev.fulcrum.automations;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.io.JsonStringEncoder;

/**
 * Replaces the secret values a request carried by {@code [secret NAME]} in what the endpoint answered, before it is
 * stored or shown: an endpoint that echoes its request must not turn the delivery log or a test result into a way of
 * reading secrets. Each value is looked for as sent and in the forms a JSON echo writes it (escaped as Jackson does,
 * with {@code \/}, and with every non-ASCII character as {@code \}{@code uxxxx} in lower or upper case). A body that
 * was cut off at the size limit in the middle of a value has that partial value replaced as well.
 */
final class SecretMask {

    static final SecretMask NONE = new SecretMask(List.of());

    /** The shortest partial value at the cut of a truncated body that is still replaced. */
    private static final int MIN_PARTIAL = 4;

    private record Form(String text, String replacement) {
    }

    private final List<Form> forms;

    private SecretMask(List<Form> forms) {
        this.forms = forms;
    }

    /**
     * A mask for {@code secrets} (name to value). When two names have the same value the first name other than
     * {@code ACCESS_TOKEN} names it (that variable is the webhook's token secret under another name).
     */
    static SecretMask of(Map<String, String> secrets) {
        if (secrets.isEmpty()) {
            return NONE;
        }
        Map<String, String> names = new LinkedHashMap<>();
        secrets.forEach((name, value) -> {
            if (value != null && !value.isEmpty()) {
                names.merge(value, name, (kept, other) -> AutomationVariables.ACCESS_TOKEN.equals(kept) ? other : kept);
            }
        });
        Map<String, String> forms = new LinkedHashMap<>();
        names.forEach((value, name) -> {
            String replacement = "[secret " + name + "]";
            String escaped = new String(JsonStringEncoder.getInstance().quoteAsString(value));
            forms.putIfAbsent(value, replacement);
            forms.putIfAbsent(escaped, replacement);
            forms.putIfAbsent(escaped.replace("/", "\\/"), replacement);
            forms.putIfAbsent(asciiOnly(escaped, "\\u%04x"), replacement);
            forms.putIfAbsent(asciiOnly(escaped, "\\u%04X"), replacement);
        });
        List<Form> list = new ArrayList<>();
        forms.forEach((text, replacement) -> list.add(new Form(text, replacement)));
        list.sort(Comparator.comparingInt((Form f) -> f.text().length()).reversed());
        return new SecretMask(List.copyOf(list));
    }

    boolean isEmpty() {
        return forms.isEmpty();
    }

    /**
     * {@code text} with every secret value replaced; when {@code truncated}, a proper prefix of a value (at least
     * {@value #MIN_PARTIAL} characters, or all but one of a shorter value) at its very end as well. Null stays null.
     */
    String apply(String text, boolean truncated) {
        if (text == null || forms.isEmpty()) {
            return text;
        }
        String tail = null;
        String body = text;
        if (truncated) {
            for (Form form : forms) {
                int min = Math.max(1, Math.min(MIN_PARTIAL, form.text().length() - 1));
                for (int k = Math.min(form.text().length() - 1, body.length()); k >= min; k--) {
                    if (body.regionMatches(body.length() - k, form.text(), 0, k)) {
                        body = body.substring(0, body.length() - k);
                        tail = form.replacement();
                        break;
                    }
                }
                if (tail != null) {
                    break;
                }
            }
        }
        List<Form> present = new ArrayList<>(2);
        for (Form form : forms) {
            if (body.contains(form.text())) {
                present.add(form);
            }
        }
        if (present.isEmpty()) {
            return tail == null ? body : body + tail;
        }
        // one pass, longest value first at each position: a replacement is never searched again
        StringBuilder out = new StringBuilder(body.length());
        int i = 0;
        outer: while (i < body.length()) {
            for (Form form : present) {
                if (body.startsWith(form.text(), i)) {
                    out.append(form.replacement());
                    i += form.text().length();
                    continue outer;
                }
            }
            out.append(body.charAt(i++));
        }
        return tail == null ? out.toString() : out.append(tail).toString();
    }

    /** The headers with every secret value in their values replaced. */
    Map<String, String> apply(Map<String, String> headers) {
        if (forms.isEmpty() || headers == null || headers.isEmpty()) {
            return headers;
        }
        Map<String, String> masked = new LinkedHashMap<>();
        headers.forEach((name, value) -> masked.put(name, apply(value, false)));
        return masked;
    }

    private static String asciiOnly(String escaped, String format) {
        StringBuilder out = null;
        for (int i = 0; i < escaped.length(); i++) {
            char c = escaped.charAt(i);
            if (c > 0x7e) {
                if (out == null) {
                    out = new StringBuilder(escaped.length() + 16).append(escaped, 0, i);
                }
                out.append(String.format(format, (int) c));
            } else if (out != null) {
                out.append(c);
            }
        }
        return out == null ? escaped : out.toString();
    }
}
