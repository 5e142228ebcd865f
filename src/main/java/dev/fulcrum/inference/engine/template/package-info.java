/**
 * Chat templates as Hugging Face renders them: the Jinja2 template a GGUF file stores ({@code tokenizer.chat_template})
 * turned into the prompt text, with the Python semantics of Hugging Face's renderer (its string, list and dict methods,
 * slices, {@code tojson}, {@code raise_exception}, {@code strftime_now}) added to Jinjava. Apart from the engines, as
 * llama.cpp keeps its template engine apart from its server's slot loop: the GGUF engine enters through
 * {@link dev.fulcrum.inference.engine.template.ChatTemplate} alone ({@code InferenceLayersTest}).
 */
package dev.fulcrum.inference.engine.template;
