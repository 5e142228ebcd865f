package dev.fulcrum.datasets;

import java.util.List;

import jakarta.inject.Singleton;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.jackson.ObjectMapperCustomizer;

import dev.fulcrum.datasets.api.model.DatasetCreateReq;
import dev.fulcrum.datasets.api.model.TableAppendSpec;
import dev.fulcrum.datasets.api.model.TableInsertSpec;
import dev.fulcrum.datasets.api.model.TableSchemaForInsert;
import dev.fulcrum.platform.json.StorableText;

/** Rows are kept as JSON text, so they may hold the NUL character that other request strings may not. */
@Singleton
public class DatasetJson implements ObjectMapperCustomizer {

    private abstract static class RowsAreJsonText {
        @JsonDeserialize(contentUsing = StorableText.JsonText.class)
        List<ObjectNode> rows;
    }

    /** The row of a {@code /table/update} append or insert, kept as the rows of {@code /table/create} are. */
    private abstract static class RowIsJsonText {
        @JsonDeserialize(using = StorableText.JsonText.class)
        ObjectNode row;
    }

    @Override
    public void customize(ObjectMapper mapper) {
        mapper.addMixIn(DatasetCreateReq.class, RowsAreJsonText.class);
        mapper.addMixIn(TableSchemaForInsert.class, RowsAreJsonText.class);
        mapper.addMixIn(TableAppendSpec.class, RowIsJsonText.class);
        mapper.addMixIn(TableInsertSpec.class, RowIsJsonText.class);
    }
}
