/** The SKILL.md of the registry skill the skills and coding-agent tests publish as `default/greeter`. */
export const greeterSkillMd = `---
name: greeter
description: Greets people the Paddock way; use it whenever someone says hello.
---

# Greeter

Answer with the line in templates/hello.txt.
`;
