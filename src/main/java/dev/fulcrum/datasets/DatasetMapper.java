package dev.fulcrum.datasets;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

import dev.fulcrum.datasets.DatasetService.TableRow;
import dev.fulcrum.datasets.DatasetService.Version;
import dev.fulcrum.datasets.api.model.DatasetCreateRes;
import dev.fulcrum.datasets.api.model.DatasetReadRes;

/** Maps datasets to the API's models, and writes table rows, whose values are stored as JSON text, as they are. */
final class DatasetMapper {

    private DatasetMapper() {
    }

    static DatasetReadRes toReadRes(Version v) {
        return new DatasetReadRes().objectId(v.version().objectId).digest(v.version().digest)
                .versionIndex(v.version().versionIndex).createdAt(v.version().createdAt).name(v.version().name)
                .description(v.version().description).rows(v.rowsRef());
    }

    static DatasetCreateRes toCreateRes(DatasetService.Created created) {
        return new DatasetCreateRes().digest(created.digest()).objectId(created.objectId())
                .versionIndex(created.versionIndex());
    }

    /** {@code {"digest": ..., "val": ..., "original_index": ...}}; digests are alphanumeric, so need no escaping. */
    static void writeRow(TableRow row, OutputStream out) throws IOException {
        out.write(("{\"digest\":\"" + row.digest() + "\",\"val\":").getBytes(StandardCharsets.US_ASCII));
        out.write(row.json().getBytes(StandardCharsets.UTF_8));
        out.write((",\"original_index\":" + row.originalIndex() + "}").getBytes(StandardCharsets.US_ASCII));
    }
}
