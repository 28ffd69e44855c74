-- mtbench101_taxonomy: tier → ability → task of MT-Bench-101 (Table 1, Table 3's column order as `position`).
-- Generated from dialogbench/mtbench101/taxonomy.py (TASKS); tests/mtbench101/test_stages.py checks they agree.
with final as (
    select * from (values
        (1, 'CM', 'Context Memory', 'Memory', 'Perceptivity'),
        (2, 'SI', 'Separate Input', 'Understanding', 'Perceptivity'),
        (3, 'AR', 'Anaphora Resolution', 'Understanding', 'Perceptivity'),
        (4, 'TS', 'Topic Shift', 'Interference', 'Perceptivity'),
        (5, 'CC', 'Content Confusion', 'Interference', 'Perceptivity'),
        (6, 'CR', 'Content Rephrasing', 'Rephrasing', 'Adaptability'),
        (7, 'FR', 'Format Rephrasing', 'Rephrasing', 'Adaptability'),
        (8, 'SC', 'Self-correction', 'Reflection', 'Adaptability'),
        (9, 'SA', 'Self-affirmation', 'Reflection', 'Adaptability'),
        (10, 'MR', 'Mathematical Reasoning', 'Reasoning', 'Adaptability'),
        (11, 'GR', 'General Reasoning', 'Reasoning', 'Adaptability'),
        (12, 'IC', 'Instruction Clarification', 'Questioning', 'Interactivity'),
        (13, 'PI', 'Proactive Interaction', 'Questioning', 'Interactivity')
    ) as t(position, task, name, ability, tier)
)

select * from final
