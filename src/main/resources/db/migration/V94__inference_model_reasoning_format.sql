-- Where a gguf model's reasoning block goes when a request does not say (reasoning_format): 'auto' answers it as
-- reasoning_content, 'none' leaves it in the content. Null for the other backends.
alter table inference_models add column reasoning_format varchar(8)
    check (reasoning_format in ('auto', 'none'));
