package dev.fulcrum.console;

import java.util.List;

import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;

/** A project's traces (templates/console/traces.html, trace.html), checked when built. */
@CheckedTemplate(basePath = "console")
final class TraceTemplates {

    /** The list's filters as the form sent them ("" when not given), and the page's place in the list. */
    public record Filters(String op, String from, String to, String status, boolean all, int offset) {

        /** The query string of these filters at another offset. */
        public String at(int other) {
            StringBuilder query = new StringBuilder("?");
            for (String[] pair : new String[][] { { "op", op }, { "from", from }, { "to", to },
                    { "status", status } }) {
                if (!pair[1].isEmpty()) {
                    query.append(pair[0]).append('=').append(Pages.path(pair[1])).append('&');
                }
            }
            if (all) {
                query.append("all=on&");
            }
            return query.append("offset=").append(other).toString();
        }

        public boolean isFiltered() {
            return !op.isEmpty() || !from.isEmpty() || !to.isEmpty() || !status.isEmpty() || all;
        }
    }

    /** A call as the lists show it. */
    public record CallView(String id, String op, String opRef, String displayName, String status, String startedAt,
            String endedAt, Long latencyMs, String exception, int depth) {

        public String getName() {
            return displayName == null || displayName.isEmpty() ? op : displayName;
        }
    }

    /** One figure of an evaluation's summary: the scorer (or model_latency), the metric's path, its value. */
    public record Metric(String scorer, String metric, String value) {
    }

    /** One row of an evaluation: the dataset row, the model's output, each scorer's result, the call. */
    public record EvaluationRow(int index, DataTemplates.Cell example, DataTemplates.Cell output,
            List<DataTemplates.Cell> scores, String callId, String status) {
    }

    public record Evaluation(List<Metric> summary, List<String> scorers, List<EvaluationRow> rows, boolean more) {
    }

    private TraceTemplates() {
    }

    static native TemplateInstance traces(String entity, String project, String base, Filters filters,
            List<CallView> calls, Integer nextOffset, List<String> statuses);

    static native TemplateInstance trace(String entity, String project, String base, CallView call, String parent,
            String traceId, String inputs, String output, String attributes, String summary, List<CallView> tree,
            boolean truncated, Evaluation evaluation);
}
