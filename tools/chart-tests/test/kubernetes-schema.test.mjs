import { renderCi, valueSets } from '../src/helm.mjs';
import { describe as name, schemaErrors, typeErrorsBySet } from '../src/kubernetes-schema.mjs';

// One TypeScript program for every value set: loading the model declarations dominates the cost.
let typeErrorsCache;
const typeErrorsOf = (valueSet) => {
  typeErrorsCache ??= typeErrorsBySet(Object.fromEntries(valueSets.map((set) => [set, renderCi(set)])));
  return typeErrorsCache[valueSet];
};

describe.each(valueSets)('helm template with %s', (valuesFile) => {
  const objects = renderCi(valuesFile);

  test('renders objects', () => {
    expect(objects.length).toBeGreaterThan(40);
  });

  test('every object passes the Kubernetes API schema of its kind', async () => {
    const errors = (await Promise.all(objects.map(schemaErrors))).flat();
    expect(errors).toEqual([]);
  });

  test('no object has a field its Kubernetes type does not define', () => {
    expect(typeErrorsOf(valuesFile)).toEqual([]);
  });

  test('object names are unique per kind', () => {
    const names = objects.map(name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });
});
