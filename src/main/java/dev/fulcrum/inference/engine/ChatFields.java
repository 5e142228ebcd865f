package dev.fulcrum.inference.engine;

/**
 * The table of what a local engine honours beyond the messages, sampling, {@code n}, stop strings and {@code logprobs}
 * that every one does. A field the engine does not honour is refused by name with 400 {@code unsupported_parameter} (a
 * value that asks for nothing, such as {@code tool_choice: "none"} or {@code response_format: {"type": "text"}}, is
 * accepted).
 *
 * @param tools
 *            {@code tools}, {@code tool_choice}, the {@code tool} role and assistants' {@code tool_calls}
 * @param responseFormat
 *            {@code response_format} {@code json_object} and {@code json_schema}
 * @param logitBias
 *            {@code logit_bias}
 * @param penalties
 *            {@code presence_penalty} and {@code frequency_penalty}
 */
public record ChatFields(boolean tools, boolean responseFormat, boolean logitBias, boolean penalties) {
}
