package dev.fulcrum.inference.engine.template;

import java.util.List;
import java.util.Map;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.el.TruthyTypeConverter;
import com.hubspot.jinjava.interpret.Context;
import com.hubspot.jinjava.interpret.InterpreterFactory;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;

import jinjava.de.odysseus.el.ExpressionFactoryImpl;
import jinjava.de.odysseus.el.tree.TreeStore;
import jinjava.de.odysseus.el.tree.impl.Cache;
import jinjava.javax.el.CompositeELResolver;
import jinjava.javax.el.ExpressionFactory;

/**
 * A Jinjava set up as transformers sets up Jinja2 for chat templates ({@code ImmutableSandboxedEnvironment(
 * trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])} plus its globals), with Jinjava's departures from
 * Jinja2 that change a prompt's text turned off or corrected: Jinja2's grammar ({@link Jinja2Syntax}), Python's
 * {@code str} of printed values ({@code True}, not {@code true}), Python's string methods, no second rendering of
 * printed text that looks like a template (a message could otherwise inject template code), and Jinja2's loops.
 */
final class Jinja2Environment {

    /** The longest prompt a template may write: far past any model's context, short of exhausting the heap. */
    static final long MAX_OUTPUT = 64L << 20;

    /** How deep macros may call themselves: far past any JSON schema, short of the Java stack's end. */
    static final int MAX_MACRO_DEPTH = 100;

    private Jinja2Environment() {
    }

    static Jinjava create() {
        LegacyOverrides jinja2 = LegacyOverrides.newBuilder().withEvaluateMapKeys(true).withIterateOverMapKeys(true)
                .withUsePyishObjectMapper(true).withUseNaturalOperatorPrecedence(true)
                .withParseWhitespaceControlStrictly(true).withAllowAdjacentTextNodes(true)
                .withUseTrimmingForNotesAndExpressions(true).withKeepNullableLoopValues(true)
                .withHandleBackslashInQuotesOnly(true).build();
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PythonStrings());
        resolver.add(new Jinja2Tags.LoopNeighbours());
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
        // trim_blocks, lstrip_blocks and the template's last newline are Jinja2's, applied by Jinja2Whitespace
        JinjavaConfig config = JinjavaConfig.newBuilder().withTrimBlocks(false).withLstripBlocks(false)
                .withKeepTrailingNewline(true).withNestedInterpretationEnabled(false).withLegacyOverrides(jinja2)
                // macros that call themselves (Hermes 3's and Functionary's walk JSON schemas); deeper fails the render
                .withEnableRecursiveMacroCalls(true).withMaxMacroRecursionDepth(MAX_MACRO_DEPTH)
                .withMaxOutputSize(MAX_OUTPUT)
                // Jinja2's sandbox allows range() up to 100000 items (Jinjava cuts at 1000 without a word)
                .withRangeLimit(100_000).withElResolver(resolver)
                .withInterperterFactory(new PythonPrintingInterpreters())
                .withObjectUnwrapper(new Jinja2Tags.NoneUnwrapper()).build();
        Jinjava jinjava = new Jinjava(config) {
            // Jinjava's own factory but for the grammar and the string conversion; JUEL's default cache size
            private final ExpressionFactory factory = new ExpressionFactoryImpl(
                    new TreeStore(Jinja2Syntax.treeBuilder(), new Cache(1000)), new PythonConversions());

            @Override
            public ExpressionFactory getExpressionFactory() {
                return factory;
            }
        };
        Context globals = jinjava.getGlobalContext();
        TemplateExtensions.register(globals);
        Jinja2Builtins.register(globals);
        Jinja2Tags.register(globals);
        return jinjava;
    }

    /** Interpreters that print a value as Python's {@code str} does, as Jinja2 prints it. */
    private static final class PythonPrintingInterpreters implements InterpreterFactory {

        @Override
        public JinjavaInterpreter newInstance(JinjavaInterpreter orig) {
            return new JinjavaInterpreter(orig) {
                @Override
                public String getAsString(Object object) {
                    return PythonValues.str(object);
                }
            };
        }

        @Override
        public JinjavaInterpreter newInstance(Jinjava application, Context context, JinjavaConfig renderConfig) {
            return new JinjavaInterpreter(application, context, renderConfig) {
                @Override
                public String getAsString(Object object) {
                    return PythonValues.str(object);
                }
            };
        }
    }

    /**
     * Python's conversions where JUEL converts: {@code 'n=' ~ 1.0 ~ true} is {@code n=1.0True}, and {@code not},
     * {@code if ... else} take Python's truth.
     */
    private static final class PythonConversions extends TruthyTypeConverter {
        private static final long serialVersionUID = 1L;

        @Override
        protected Boolean coerceToBoolean(Object value) {
            return PythonValues.truthy(value);
        }

        @Override
        protected String coerceToString(Object value) {
            if (value instanceof Boolean || value instanceof Double || value instanceof Float || value instanceof Map
                    || value instanceof List) {
                return PythonValues.str(value);
            }
            return super.coerceToString(value);
        }
    }
}
