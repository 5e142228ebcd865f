-- A catalog model served by llama.cpp inside Fulcrum: the GGUF file it reads (backend 'gguf').
alter table inference_models add column gguf_path text;
alter table inference_models drop constraint inference_models_backend_check;
alter table inference_models add constraint inference_models_backend_check
    check (backend in ('openai-compatible', 'builtin', 'gguf'));
