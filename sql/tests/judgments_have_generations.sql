-- Every judgment refers to a generation that is in the lake.
select j.cell_key from judgments j anti join generations g on j.generation_key = g.cell_key
