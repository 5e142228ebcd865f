package dev.fulcrum.console;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import dev.fulcrum.runs.api.RunsApi;
import dev.fulcrum.runs.api.model.MediaPage;
import dev.fulcrum.runs.api.model.MediaRow;
import dev.fulcrum.runs.api.model.RunFile;
import dev.fulcrum.runs.api.model.RunFilePage;

/**
 * The media of a run's page, read through the runs API ({@code .../media}, {@code .../files}, {@code .../file}): per
 * key, images as frames of a step slider, the last table (a page of its rows), the last histogram as bars, and other
 * media (HTML, audio) as links to their files; and the run's files.
 */
final class RunMediaPanel {

    /** Rows of a table shown at once. */
    static final int TABLE_PAGE = 10;
    /** The largest table file read to show it. */
    static final long MAX_TABLE_BYTES = 4 << 20;
    /** The most media rows read for a page. */
    static final int MAX_ROWS = 1000;
    static final int WIDTH = 320;
    static final int HEIGHT = 120;

    private static final ObjectMapper JSON = new ObjectMapper();

    public record Frame(long step, String url, String caption) {
    }

    public record ImageSeries(String key, List<Frame> frames, String framesJson) {
        public Frame last() {
            return frames.get(frames.size() - 1);
        }
    }

    public record TableView(String key, long step, String url, List<String> columns, List<List<String>> rows,
            int offset, int total, Integer previous, Integer next) {
        public int lastShown() {
            return offset + rows.size();
        }
    }

    public record Bar(double x, double y, double width, double height, String label) {
    }

    public record HistogramView(String key, long step, List<Bar> bars, String low, String high) {
    }

    public record Link(String key, long step, String type, String url) {
    }

    public record Media(List<ImageSeries> images, List<TableView> tables, List<HistogramView> histograms,
            List<Link> links, List<RunFile> files) {
        public boolean isEmpty() {
            return images.isEmpty() && tables.isEmpty() && histograms.isEmpty() && links.isEmpty();
        }
    }

    private RunMediaPanel() {
    }

    /** The run's media; {@code table} and {@code rows} page the table of that key. */
    static Media read(RunsApi runs, String entity, String project, String run, String fileBase, String table,
            int rows) {
        MediaPage page = Pages.body(runs.listRunMedia(entity, project, run, MAX_ROWS, 0));
        Map<String, List<Frame>> images = new LinkedHashMap<>();
        Map<String, MediaRow> lastTable = new LinkedHashMap<>();
        Map<String, MediaRow> lastHistogram = new LinkedHashMap<>();
        Map<String, Link> links = new LinkedHashMap<>();
        for (MediaRow row : page.getRows()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = row.getValues().fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> field = it.next();
                JsonNode value = field.getValue();
                String type = value.path("_type").asText("");
                String path = value.path("path").asText(null);
                switch (type) {
                    case "image-file" -> {
                        if (path != null) {
                            images.computeIfAbsent(field.getKey(), k -> new ArrayList<>()).add(new Frame(row.getStep(),
                                    fileBase + Pages.path(path), value.path("caption").asText("")));
                        }
                    }
                    case "table-file" -> lastTable.put(field.getKey(), row);
                    case "histogram" -> lastHistogram.put(field.getKey(), row);
                    default -> {
                        if (path != null && type.endsWith("-file")) {
                            links.put(field.getKey(),
                                    new Link(field.getKey(), row.getStep(), type, fileBase + Pages.path(path)));
                        }
                    }
                }
            }
        }
        List<ImageSeries> series = new ArrayList<>();
        images.forEach((key, frames) -> series.add(new ImageSeries(key, frames, framesJson(frames))));
        RunFilePage listed = Pages.body(runs.listRunFiles(entity, project, run, null, null, 1000));
        List<RunFile> files = listed.getFiles();
        List<TableView> tables = new ArrayList<>();
        lastTable.forEach((key, row) -> tables
                .add(table(runs, entity, project, run, fileBase, key, row, files, key.equals(table) ? rows : 0)));
        List<HistogramView> histograms = new ArrayList<>();
        lastHistogram.forEach((key, row) -> {
            HistogramView view = histogram(key, row.getStep(), row.getValues().get(key));
            if (view != null) {
                histograms.add(view);
            }
        });
        return new Media(series, tables, histograms, new ArrayList<>(links.values()), files);
    }

    private static String framesJson(List<Frame> frames) {
        List<Map<String, Object>> list = new ArrayList<>();
        for (Frame frame : frames) {
            list.add(Map.of("step", frame.step(), "url", frame.url(), "caption", frame.caption()));
        }
        try {
            return JSON.writeValueAsString(list);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A page of the table's rows, read from its file ({@code {"columns": [...], "data": [[...], ...]}}). */
    private static TableView table(RunsApi runs, String entity, String project, String run, String fileBase, String key,
            MediaRow row, List<RunFile> files, int offset) {
        String path = row.getValues().get(key).path("path").asText("");
        long size = files.stream().filter(f -> f.getName().equals(path)).mapToLong(RunFile::getSize).findFirst()
                .orElse(-1);
        JsonNode content = JsonNodeFactory.instance.objectNode();
        if (size >= 0 && size <= MAX_TABLE_BYTES) {
            Response file = runs.downloadRunFile(entity, project, run, path, null, null);
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try {
                ((StreamingOutput) file.getEntity()).write(bytes);
                content = JSON.readTree(bytes.toByteArray());
            } catch (IOException e) {
                content = JsonNodeFactory.instance.objectNode(); // not a table: shown empty
            }
        }
        List<String> columns = new ArrayList<>();
        content.path("columns").forEach(column -> columns.add(column.asText()));
        JsonNode data = content.path("data");
        int total = data.size();
        int start = Math.max(0, Math.min(offset, Math.max(0, total - 1)));
        List<List<String>> shown = new ArrayList<>();
        for (int i = start; i < Math.min(total, start + TABLE_PAGE); i++) {
            List<String> cells = new ArrayList<>();
            data.get(i).forEach(cell -> cells.add(cell.isTextual() ? cell.asText() : cell.toString()));
            shown.add(cells);
        }
        return new TableView(key, row.getStep(), fileBase + Pages.path(path), columns, shown, start, total,
                start > 0 ? Math.max(0, start - TABLE_PAGE) : null,
                start + TABLE_PAGE < total ? start + TABLE_PAGE : null);
    }

    /** W&B's histogram ({@code values}: counts, {@code bins}: their edges) as bars of a chart; null when malformed. */
    static HistogramView histogram(String key, long step, JsonNode histogram) {
        JsonNode values = histogram.path("values");
        JsonNode bins = histogram.path("bins");
        if (!values.isArray() || values.isEmpty() || values.size() > 512) {
            return null;
        }
        double max = 0;
        for (JsonNode value : values) {
            max = Math.max(max, value.asDouble());
        }
        List<Bar> bars = new ArrayList<>();
        double width = (double) WIDTH / values.size();
        for (int i = 0; i < values.size(); i++) {
            double count = values.get(i).asDouble();
            double height = max > 0 ? count / max * HEIGHT : 0;
            String range = bins.size() > i + 1 ? "[" + number(bins.get(i)) + ", " + number(bins.get(i + 1)) + ")"
                    : "bin " + i;
            bars.add(new Bar(round(i * width), round(HEIGHT - height), round(Math.max(width - 1, 0.5)), round(height),
                    range + ": " + number(values.get(i))));
        }
        String low = bins.size() > 0 ? number(bins.get(0)) : "";
        String high = bins.size() > 0 ? number(bins.get(bins.size() - 1)) : "";
        return new HistogramView(key, step, bars, low, high);
    }

    private static double round(double value) {
        return Math.round(value * 100) / 100.0;
    }

    private static String number(JsonNode value) {
        double v = value.asDouble();
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v)
                : String.format(java.util.Locale.ROOT, "%.4g", v);
    }
}
