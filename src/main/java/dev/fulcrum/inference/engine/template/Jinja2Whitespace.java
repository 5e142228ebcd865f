package dev.fulcrum.inference.engine.template;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Jinja2's {@code trim_blocks} and {@code lstrip_blocks}, applied to the template's source before Jinjava parses it
 * (with Jinjava's own versions off). Jinjava strips the spaces before every block tag, even after text on the same line
 * ({@code {{ x }} {% if y %}} loses its space), and knows neither {@code {%+} nor {@code +%}}; a chat template's
 * spacing is part of the prompt. This walks the source as Jinja2's lexer does (text, then a tag whose end is found
 * outside string literals and brackets, raw blocks verbatim) and edits only the text between tags.
 */
final class Jinja2Whitespace {

    private static final Pattern TAG_START = Pattern.compile("\\{([{%#])([-+]?)");
    private static final Pattern RAW_BEGIN = Pattern.compile("\\{%[-+]?\\s*raw\\s*-?%}");
    private static final Pattern RAW_END = Pattern.compile("\\{%([-+]?)\\s*endraw\\s*([-+]?)%}");

    private final String source;
    private final StringBuilder out = new StringBuilder();
    private int pos;
    /** Whether the text now starting starts a line: the template's start, or a tag end that took a newline. */
    private boolean lineStarting = true;

    private Jinja2Whitespace(String source) {
        this.source = source;
    }

    /** The source as Jinja2 would see it with {@code trim_blocks=True, lstrip_blocks=True}, for Jinjava. */
    static String apply(String source) {
        Jinja2Whitespace lexer = new Jinja2Whitespace(source);
        lexer.run();
        return lexer.out.toString();
    }

    private void run() {
        Matcher start = TAG_START.matcher(source);
        while (start.find(pos)) {
            char kind = start.group(1).charAt(0);
            String sign = start.group(2);
            Matcher raw = RAW_BEGIN.matcher(source).region(start.start(), source.length());
            boolean isRaw = kind == '%' && raw.lookingAt();
            text(start.start(), kind != '{' && !sign.equals("-") && !sign.equals("+"));
            if (isRaw) {
                // Jinja2 keeps the newline after {% raw %} and takes the body as written
                out.append(source, start.start(), raw.end());
                pos = raw.end();
                lineStarting = source.charAt(pos - 1) == '\n';
                rawBody();
                continue;
            }
            out.append("{").append(kind).append(sign.equals("-") ? "-" : "");
            pos = start.end();
            if (kind == '#') {
                comment();
            } else {
                tag(kind == '{' ? '}' : '%');
            }
        }
        out.append(source, pos, source.length());
    }

    /** The text from {@code pos} to {@code end}, its last line's indentation dropped before a block or comment tag. */
    private void text(int end, boolean lstrip) {
        String text = source.substring(pos, end);
        if (lstrip) {
            int lineStart = text.lastIndexOf('\n') + 1;
            if ((lineStart > 0 || lineStarting) && isBlank(text, lineStart)) {
                text = text.substring(0, lineStart);
            }
        }
        out.append(text);
        pos = end;
    }

    private static boolean isBlank(String text, int from) {
        for (int i = from; i < text.length(); i++) {
            if (!Character.isWhitespace(text.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    /** A comment's body and end; {@code #}} takes the newline after it, {@code +#}} keeps it. */
    private void comment() {
        int end = source.indexOf("#}", pos);
        if (end < 0) {
            out.append(source, pos, source.length()); // Jinjava reports the unclosed comment
            pos = source.length();
            return;
        }
        closeTag(source.subSequence(pos, end), end, end + 2);
    }

    /**
     * An expression's or a block's body and end, found outside string literals and brackets, as Jinja2 does. A dict
     * literal's closing brace right before another brace gets a space after it: Jinjava would end the expression at
     * that {@code }}} ({@code {{ f({'a': {'b': 1}}) }}}).
     */
    private void tag(char closing) {
        StringBuilder body = new StringBuilder();
        int depth = 0;
        char quote = 0;
        for (int i = pos; i < source.length(); i++) {
            char c = source.charAt(i);
            char next = i + 1 < source.length() ? source.charAt(i + 1) : 0;
            if (quote != 0) {
                if (c == '\\' && next != 0) {
                    body.append(c);
                    c = source.charAt(++i);
                } else if (c == quote) {
                    quote = 0;
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
            } else if (depth == 0 && c == closing && next == '}') {
                closeTag(body, i, i + 2);
                return;
            } else if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
                depth--;
                if (c == '}' && next == '}') {
                    body.append("} ");
                    continue;
                }
            }
            body.append(c);
        }
        out.append(source, pos, source.length()); // Jinjava reports the unclosed tag
        pos = source.length();
    }

    /**
     * Writes a tag's body (from {@code pos} to its end delimiter at {@code close}; {@code end} is after it), then
     * applies {@code trim_blocks}: the one newline after a block or comment goes, unless the end is {@code +%}}. The
     * newline moves inside the tag, where it means nothing, so that line numbers in errors stay the source's. After
     * {@code -%}} Jinjava strips the whitespace itself, but the next text starts a line if that whitespace ends one.
     */
    private void closeTag(CharSequence body, int close, int end) {
        char sign = close > pos ? source.charAt(close - 1) : 0;
        boolean variable = source.charAt(close) == '}';
        boolean keepNewline = sign == '+' && !variable;
        out.append(body, 0, keepNewline ? body.length() - 1 : body.length());
        if (sign == '-') {
            out.append(source, close, end);
            int after = end;
            while (after < source.length() && Character.isWhitespace(source.charAt(after))) {
                after++;
            }
            lineStarting = after > end && source.charAt(after - 1) == '\n';
            out.append(source, end, after);
            pos = after;
        } else if (!variable && !keepNewline && end < source.length() && source.charAt(end) == '\n') {
            out.append('\n').append(source, close, end);
            pos = end + 1;
            lineStarting = true;
        } else {
            out.append(source, close, end);
            pos = end;
            lineStarting = false;
        }
    }

    /** A raw block's body as written, up to {@code {% endraw %}}, which is stripped and trimmed as a block tag. */
    private void rawBody() {
        Matcher end = RAW_END.matcher(source);
        if (!end.find(pos)) {
            out.append(source, pos, source.length());
            pos = source.length();
            return;
        }
        String sign = end.group(1);
        text(end.start(), !sign.equals("-") && !sign.equals("+"));
        out.append(sign.equals("-") ? "{%-" : "{%");
        pos = end.start() + 2 + sign.length();
        closeTag(source.subSequence(pos, end.end() - 2), end.end() - 2, end.end());
    }
}
