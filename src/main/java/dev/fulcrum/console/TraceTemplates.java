package dev.fulcrum.console;

import java.util.List;

import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;

/** A project's traces (templates/console/traces.html, trace.html), checked when built. */
@CheckedTemplate(basePath = "console")
final class TraceTemplates {

    private TraceTemplates() {
    }

    static native TemplateInstance traces(String entity, String project, String base, TracePages.Filters filters,
            List<TracePages.CallView> calls, Integer nextOffset, List<String> statuses);

    static native TemplateInstance trace(String entity, String project, String base, TracePages.CallView call,
            String parent, String traceId, String inputs, String output, String attributes, String summary,
            List<TracePages.CallView> tree, boolean truncated, TracePages.Evaluation evaluation);
}
